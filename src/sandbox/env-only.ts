import type { SandboxBackend } from './contract.js'
import { sameUserSandbox } from './none.js'

/**
 * `env -i` plus the allowlisted environment and the attempt's fresh HOME, as the action's own user.
 * **Not isolation**: the harness can still read the action's `/proc/<pid>/environ`, command lines and
 * the user's files (design/sandbox.md §1). The fallback where no isolating backend probes ok, only
 * with `sandbox.allow_unisolated`; the report says so.
 */
export const envOnlyBackend: SandboxBackend = {
  kind: 'env-only',
  capabilities: { hidesProcesses: false, separateUser: false, hidesFiles: false, readOnlySystem: false },
  async probe() {
    return { ok: true, reason: null }
  },
  async open(spec) {
    return sameUserSandbox('env-only', spec, (cmd) => ({
      ...cmd,
      command: 'env',
      args: ['-i', ...Object.entries(cmd.env).map(([k, v]) => `${k}=${v}`), cmd.command, ...cmd.args],
    }))
  },
}
