import type { Command } from 'commander'
import { loadManifest } from '../../manifest/load.js'
import { primaryRoute } from '../../manifest/schema.js'
import { type ProxyRoute, RecordingProxy } from '../../telemetry/proxy.js'
import { HwError } from '../../util/errors.js'

interface ProxyOptions {
  upstream: string
  port: string
  ledger: string
  manifest?: string
  keyEnv?: string
  forwardAttribution?: boolean
  maxBodyMb: string
}

/**
 * `harness-watch proxy`: the recording proxy on its own, in the foreground until SIGINT/SIGTERM.
 * Any key is accepted (standalone mode); attribution comes from a path prefix
 * `/a/<cell>:<instance>:<trial>:<attempt>` when present. With `--key-env` the client's key is replaced
 * by the real one upstream. Rows are appended to `--ledger` as requests complete.
 */
export function registerProxy(program: Command): void {
  program
    .command('proxy')
    .description(
      'Run the recording proxy in front of a model server; prints "listening on <origin>" once ready',
    )
    .requiredOption('--upstream <url>', 'upstream base URL (scheme, host, port, optional path; no /v1)')
    .requiredOption('--ledger <file>', 'JSONL ledger to append one row per request to')
    .option('--port <n>', 'TCP port on 127.0.0.1 (0 = any free port)', '0')
    .option('--manifest <file>', 'take the model route (provider, prices, cache semantics) from a manifest')
    .option('--key-env <VAR>', 'environment variable holding the real upstream key')
    .option('--forward-attribution', 'send x-hw-* attribution headers upstream (scripted model only)')
    .option(
      '--max-body-mb <n>',
      'largest request body, MiB, as sent and decompressed (larger: 413 in the provider shape, recorded)',
      '64',
    )
    .action(async (opts: ProxyOptions) => {
      const port = Number(opts.port)
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new HwError('bad_option', `--port must be an integer from 0 to 65535, got "${opts.port}"`)
      }
      if (!URL.canParse(opts.upstream) || !/^https?:$/.test(new URL(opts.upstream).protocol)) {
        throw new HwError('bad_option', `--upstream must be an http(s) URL, got "${opts.upstream}"`)
      }
      const maxBodyMb = Number(opts.maxBodyMb)
      if (!Number.isFinite(maxBodyMb) || maxBodyMb <= 0 || maxBodyMb > 4096) {
        throw new HwError(
          'bad_option',
          `--max-body-mb must be a number above 0 and at most 4096, got "${opts.maxBodyMb}"`,
        )
      }
      let upstreamKey: string | undefined
      if (opts.keyEnv) {
        upstreamKey = process.env[opts.keyEnv]
        if (!upstreamKey) {
          throw new HwError('missing_env', `--key-env ${opts.keyEnv}: the variable is not set`, {
            help: `export ${opts.keyEnv}=<upstream API key>`,
          })
        }
      }
      let route: ProxyRoute = { provider: null }
      let experimentId = 'standalone'
      if (opts.manifest) {
        const { manifest } = await loadManifest(opts.manifest)
        const primary = primaryRoute(manifest)
        route = {
          provider: primary.provider,
          prices: primary.prices ?? null,
          cacheSemantics: primary.cache_semantics,
        }
        experimentId = manifest.experiment.id
      }
      let rows = 0
      const proxy = await RecordingProxy.start({
        upstream: opts.upstream,
        upstreamKey,
        route,
        ledgerFile: opts.ledger,
        runId: `proxy-${new Date().toISOString().replace(/[:.]/g, '-')}`,
        experimentId,
        standalone: true,
        forwardAttribution: opts.forwardAttribution === true,
        port,
        maxBodyBytes: Math.round(maxBodyMb * 1024 * 1024),
        onRow: () => {
          rows++
        },
      })
      process.stdout.write(`listening on ${proxy.origin}\n`)
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop)
          process.off('SIGTERM', stop)
          proxy.close().then(resolve, resolve)
        }
        process.on('SIGINT', stop)
        process.on('SIGTERM', stop)
      })
      process.stderr.write(`proxy stopped: ${rows} request(s) recorded in ${opts.ledger}\n`)
    })
}
