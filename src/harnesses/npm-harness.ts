import type { SandboxBackend } from '../sandbox/contract.js'
import type { HarnessAdapter, InstallContext, InstalledHarness } from './contract.js'
import { type InstallOptions, installNpm, type NpmHarnessSpec } from './install.js'
import { probeCliVersion } from './probe.js'

/** How to start an installed harness: JS entry points run on the runner's Node, native binaries directly. */
export function launch(installed: InstalledHarness, args: string[]): { command: string; args: string[] } {
  if (/\.(c|m)?js$/.test(installed.bin)) return { command: process.execPath, args: [installed.bin, ...args] }
  return { command: installed.bin, args }
}

/**
 * `install` and `probeVersion` of an npm harness from its spec: install into the shared cache, then
 * ask the CLI itself for `--version` in the run's sandbox with an isolated environment (with the harness's quieting variables,
 * so the probe makes no network call either).
 */
export function npmLifecycle(
  spec: NpmHarnessSpec,
  probeEnv: Record<string, string> = {},
  opts: InstallOptions = {},
): Pick<HarnessAdapter, 'install' | 'probeVersion'> {
  return {
    install: (version: string, ctx: InstallContext) => installNpm(spec, version, ctx, opts),
    probeVersion: async (installed: InstalledHarness, sandbox?: SandboxBackend) => {
      const { command, args } = launch(installed, [])
      return probeCliVersion(command, args, probeEnv, undefined, { sandbox, readOnly: [installed.root] })
    },
  }
}
