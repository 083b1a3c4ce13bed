import { runHarnessProcess } from '../process/exec.js'
import type { Sandbox, SandboxBackend, SandboxSpec } from './contract.js'

/**
 * No sandbox: the command runs as a child of the action, as its user, in its own process group with
 * the environment it is given (an allowlist) — the behaviour before sandboxes. Only by explicit opt-in
 * (`sandbox.allow_unisolated`): the harness can read the action's environment through /proc.
 */
export const noneBackend: SandboxBackend = {
  kind: 'none',
  capabilities: { hidesProcesses: false, separateUser: false, hidesFiles: false, readOnlySystem: false },
  async probe() {
    return { ok: true, reason: null }
  },
  async open(spec: SandboxSpec): Promise<Sandbox> {
    return sameUserSandbox('none', spec, (cmd) => cmd)
  },
}

/** A sandbox of the action's own user: `wrap` may rewrite the command (env-only starts it under `env -i`). */
export function sameUserSandbox(
  kind: Sandbox['kind'],
  spec: SandboxSpec,
  wrap: (cmd: Parameters<Sandbox['exec']>[0]) => Parameters<Sandbox['exec']>[0],
): Sandbox {
  return {
    kind,
    root: spec.writable[0] ?? '/',
    // The action's own network: a harness could reach a model around the proxy.
    network: 'host',
    exec: (cmd, limits) => runHarnessProcess(wrap(cmd), limits),
    async close() {},
  }
}
