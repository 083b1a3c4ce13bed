import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { BridgeEndpoint } from '../harnesses/bridge-endpoint.js'
import { bundledSdk } from '../harnesses/pi-bridge.js'

/** What a bridge task's instance source hands the attempt: the environment file and a fresh state folder. */
export interface BridgeSpec {
  /** environment/bridge.json of the task (absolute). */
  envFile: string
  /** The attempt's state folder (world.json, calls.jsonl), outside workspace and home (absolute). */
  stateDir: string
}

/**
 * How to start this Harness Watch's own CLI as a child process: from the bundle (`node dist/cli/index.js`)
 * or, when running from source, `node --import <tsx loader> src/cli/entry.ts`. Paths are absolute, so the
 * command works from any working directory (a harness starts the bridge in its workspace).
 */
export function selfCli(moduleFile = fileURLToPath(import.meta.url)): { command: string; args: string[] } {
  if (moduleFile.endsWith('.ts')) {
    const entry = path.resolve(path.dirname(moduleFile), '..', 'cli', 'entry.ts')
    const loader = createRequire(moduleFile).resolve('tsx')
    return { command: process.execPath, args: ['--import', pathToFileURL(loader).href, entry] }
  }
  // Bundled: the CLI bundle itself, or dist/cli/index.js beside the action bundle.
  const beside = path.join(path.dirname(moduleFile), 'cli', 'index.js')
  return { command: process.execPath, args: [existsSync(beside) ? beside : moduleFile] }
}

/**
 * The stdio endpoint of one attempt's bridge: `harness-watch bridge serve --env <file> --state <dir>
 * --sandbox <workspace>`, every setting in argv (rig.md §3.2: Codex whitelists the server's env, Gemini
 * and Copilot drop variables). Each harness invocation starts its own server; the world persists in the
 * state folder across them (and across resumed turns).
 */
export function bridgeStdioEndpoint(spec: BridgeSpec, sandbox: string, cli = selfCli()): BridgeEndpoint {
  return {
    kind: 'stdio',
    command: cli.command,
    args: [
      ...cli.args,
      'bridge',
      'serve',
      '--env',
      spec.envFile,
      '--state',
      spec.stateDir,
      '--sandbox',
      sandbox,
    ],
  }
}

/**
 * What the sandbox must let a harness's bridge child reach: the attempt's state folder (written), and
 * (read) this package's folder (the CLI and its node_modules: the nearest folder up from this module
 * holding package.json), the bundled MCP SDK client the Pi extension loads when it lies outside it
 * (the CLI bundle's own folder, dist/cli, does not hold dist/pi-bridge-sdk), and the task's
 * environment folder (the bridge's --env file; a builtin panel lives beside the package, which a
 * sandbox hides when it is under /home or /tmp). The task's graders stay unreachable.
 */
export function bridgeSandboxPaths(
  spec: BridgeSpec,
  moduleFile = fileURLToPath(import.meta.url),
): { writable: string[]; readOnly: string[] } {
  const [root, ...sdk] = harnessWatchReadable(moduleFile)
  const env = path.dirname(spec.envFile)
  const extra = [...sdk, ...(path.relative(root as string, env).startsWith('..') ? [env] : [])]
  return { writable: [spec.stateDir], readOnly: [root as string, ...extra] }
}

/**
 * What of this package a sandboxed harness must read to reach the bridge (the Pi extension loads the
 * MCP SDK client from it): the package folder, then the bundled SDK client's folder when it lies
 * outside it — run from the CLI bundle, the package folder is dist/cli (it holds its own package.json)
 * and the bundle is dist/pi-bridge-sdk. A sandbox hides everything under /tmp and /home that it is
 * not given, so from a clone there both must be named.
 */
export function harnessWatchReadable(moduleFile = fileURLToPath(import.meta.url)): string[] {
  const root = harnessWatchRoot(moduleFile)
  const sdk = bundledSdk(moduleFile)
  const sdkDir = sdk ? path.dirname(sdk) : null
  return sdkDir && path.relative(root, sdkDir).startsWith('..') ? [root, sdkDir] : [root]
}

/**
 * This Harness Watch's own folder (the nearest one holding package.json above this module): the
 * bridge CLI and the MCP SDK that the Pi bridge extension loads live there, so a sandboxed harness
 * that reaches the bridge must be able to read it.
 */
export function harnessWatchRoot(moduleFile = fileURLToPath(import.meta.url)): string {
  let dir = path.dirname(moduleFile)
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir)
  return dir
}
