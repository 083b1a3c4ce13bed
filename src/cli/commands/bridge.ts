import type { Command } from 'commander'
import { openEnvironment } from '../../bridge/open.js'
import { serveHttp, serveStdio } from '../../bridge/server.js'
import { HwError } from '../../util/errors.js'

interface ServeOptions {
  env: string
  state: string
  sandbox?: string
  http?: string
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1'])

/**
 * `harness-watch bridge serve`: the tool-bridge, an MCP server for an environment file. Over stdio by
 * default (stdout is the protocol); with `--http host:port` over Streamable HTTP on a loopback address,
 * printing `listening on <url>` and running until SIGINT/SIGTERM.
 */
export function registerBridge(program: Command): void {
  const bridge = program
    .command('bridge')
    .description('The tool-bridge: serve an environment file as MCP tools')
  bridge
    .command('serve')
    .description('Serve the tools of an environment file over MCP (stdio, or Streamable HTTP with --http)')
    .requiredOption('--env <file>', 'environment file (environment/bridge.json of a bridge task)')
    .requiredOption('--state <dir>', 'folder for world.json (kept across restarts) and calls.jsonl')
    .option('--sandbox <dir>', 'folder the bash/read_file/write_file builtins are confined to (default: cwd)')
    .option(
      '--http <host:port>',
      'serve Streamable HTTP at http://<host:port>/mcp instead of stdio (port 0 = any)',
    )
    .action(async (opts: ServeOptions) => {
      const listen = opts.http === undefined ? null : parseListen(opts.http)
      const { dispatcher } = await openEnvironment(opts.env, opts.state, opts.sandbox ?? process.cwd())
      if (!listen) {
        await serveStdio(dispatcher)
        return
      }
      const served = await serveHttp(dispatcher, listen.host, listen.port)
      process.stdout.write(`listening on ${served.url}\n`)
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop)
          process.off('SIGTERM', stop)
          served.close().then(resolve, resolve)
        }
        process.on('SIGINT', stop)
        process.on('SIGTERM', stop)
      })
    })
}

function parseListen(v: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(v)
  const host = m?.[1] ?? m?.[2]
  const port = Number(m?.[3])
  if (!m || host === undefined || !Number.isInteger(port) || port > 65535) {
    throw new HwError('bad_option', `--http must be <host>:<port>, e.g. 127.0.0.1:0, got "${v}"`)
  }
  if (!LOOPBACK.has(host)) {
    throw new HwError(
      'bad_option',
      `--http ${v}: the bridge serves loopback addresses only (127.0.0.1, localhost, ::1)`,
      {
        help: 'its builtins run commands in the sandbox; never expose them to a network',
      },
    )
  }
  return { host, port }
}
