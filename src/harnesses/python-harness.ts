import path from 'node:path'
import type { SandboxBackend } from '../sandbox/contract.js'
import type { HarnessAdapter, InstallContext, InstalledHarness } from './contract.js'
import { type InstallOptions, installPip, type PipHarnessSpec } from './install.js'
import { probeCliVersion } from './probe.js'

/** The venv's bin folder of an installed Python harness (first on PATH so its console scripts resolve). */
export function venvBin(installed: InstalledHarness): string {
  return path.dirname(installed.bin)
}

/**
 * `install` and `probeVersion` of a Python harness: `pip install <pkg>==<version>` into a venv in the
 * shared cache, then `<script> --version` in the run's sandbox with an isolated environment.
 */
export function pipLifecycle(
  spec: PipHarnessSpec,
  probeEnv: Record<string, string> = {},
  opts: InstallOptions & { python?: string; pipArgs?: string[] } = {},
): Pick<HarnessAdapter, 'install' | 'probeVersion'> {
  return {
    install: (version: string, ctx: InstallContext) => installPip(spec, version, ctx, opts),
    probeVersion: (installed: InstalledHarness, sandbox?: SandboxBackend) =>
      probeCliVersion(installed.bin, [], probeEnv, undefined, { sandbox, readOnly: [installed.root] }),
  }
}
