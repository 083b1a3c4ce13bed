import { defaultContainerSetting, type SandboxSetting } from '../manifest/schema.js'
import type { CanaryResult, Isolation } from '../records/isolation.js'
import { HwError } from '../util/errors.js'
import { type CanaryCheck, runCanary } from './canary.js'
import { containerBackend } from './container/backend.js'
import { type ProbeResult, type SandboxBackend, UNISOLATED_WARNING } from './contract.js'
import { envOnlyBackend } from './env-only.js'
import { namespaceBackend } from './namespace.js'
import { noneBackend } from './none.js'
import { privilege } from './privileged.js'

/** Backends chosen by name alone (the container backend is made from the manifest's settings). */
export type HostIsolation = Exclude<Isolation, 'container'>

/** Every host backend by name (a missing entry fails to compile). */
export const BACKENDS: Record<HostIsolation, SandboxBackend> = {
  'namespace+uid': namespaceBackend(privilege),
  'env-only': envOnlyBackend,
  none: noneBackend,
}

/** Isolating backends, strongest first: what `auto` tries. */
const ISOLATING: readonly HostIsolation[] = ['namespace+uid']

/** The backend a run uses, chosen once, with its canary result and what was tried. */
export interface SandboxChoice {
  backend: SandboxBackend
  canary: CanaryResult
  /** Lines for a person: why a stronger backend was not used, where a canary was seen. */
  notes: string[]
}

const choices = new Map<string, Promise<SandboxChoice>>()

/**
 * Choose the sandbox backend for `setting` once per process and `workRoot` (later calls get the same
 * answer): probe, then the canary self-test before the first attempt.
 * - `auto`: the strongest isolating backend that probes ok and passes the canary; else, with
 *   `allow_unisolated`, env-only (and the notes say why); else HwError `sandbox_unavailable`.
 * - `namespace+uid`: must probe ok and pass the canary, else HwError (fail closed), or with
 *   `allow_unisolated` a downgrade to env-only, said in the notes.
 * - `env-only`: canary run and reported (expected `exposed`); `none`: canary `skipped`.
 */
export function chooseSandbox(setting: SandboxSetting, workRoot: string): Promise<SandboxChoice> {
  const key = JSON.stringify([setting.backend, setting.allow_unisolated, setting.container ?? null, workRoot])
  let p = choices.get(key)
  if (!p) {
    p = decide(setting, workRoot, BACKENDS)
    choices.set(key, p)
    p.catch(() => choices.delete(key))
  }
  return p
}

/** The decision behind chooseSandbox, over any backend table (tests pass their own). */
export async function decide(
  setting: SandboxSetting,
  workRoot: string,
  table: Record<HostIsolation, SandboxBackend>,
  canary: (b: SandboxBackend, root: string) => Promise<CanaryCheck> = runCanary,
): Promise<SandboxChoice> {
  const notes: string[] = []
  if (setting.backend === 'none') return { backend: table.none, canary: 'skipped', notes }
  if (setting.backend === 'container') return decideContainer(setting, workRoot, table, canary)
  const wanted: readonly HostIsolation[] = setting.backend === 'auto' ? ISOLATING : [setting.backend]
  for (const kind of wanted) {
    const backend = table[kind]
    const probe: ProbeResult = await backend.probe()
    if (!probe.ok) {
      notes.push(`sandbox ${kind} is not available: ${probe.reason ?? 'probe failed'}`)
      continue
    }
    const check = await canary(backend, workRoot)
    if (kind === 'env-only') {
      // Not isolation: the canary shows what a harness could read; it is reported, not fatal.
      if (check.result === 'exposed')
        notes.push(`canary seen (env-only is not isolation): ${check.seen.join('; ')}`)
      return { backend, canary: check.result, notes }
    }
    if (check.result === 'passed') return { backend, canary: 'passed', notes }
    notes.push(`sandbox ${kind} failed its canary self-test: the probe saw ${check.seen.join('; ')}`)
  }
  if (!setting.allow_unisolated) {
    throw new HwError('sandbox_unavailable', 'no sandbox that isolates harnesses works on this machine', {
      where: 'sandbox.backend',
      details: notes,
      help:
        'run where root or passwordless sudo and util-linux (unshare, setpriv) are available (GitHub-hosted ' +
        'Linux runners have both), or set sandbox.allow_unisolated: true to run harnesses as your own user',
    })
  }
  const backend = table['env-only']
  const check = await canary(backend, workRoot)
  notes.push(`running harnesses without isolation (env-only): ${UNISOLATED_WARNING}`)
  return { backend, canary: check.result, notes }
}

/**
 * The container backend: the agent and the task's verifier run in containers; jobs beside them
 * (harness installs, version probes, git on the workspace) run in the host backend `auto` would choose
 * (fail closed the same way). The canary runs in a container: it must see nothing.
 */
async function decideContainer(
  setting: SandboxSetting,
  workRoot: string,
  table: Record<HostIsolation, SandboxBackend>,
  canary: (b: SandboxBackend, root: string) => Promise<CanaryCheck>,
): Promise<SandboxChoice> {
  const c = setting.container ?? defaultContainerSetting()
  const auxChoice = decide({ ...setting, backend: 'auto' }, workRoot, table, canary)
  auxChoice.catch(() => {})
  const backend = containerBackend(c, async () => (await auxChoice).backend)
  const probe = await backend.probe()
  if (!probe.ok) {
    throw new HwError('sandbox_unavailable', 'the container backend cannot run here', {
      where: 'sandbox.container.runtime',
      details: [probe.reason ?? 'probe failed'],
      help: 'install Podman or Docker, or choose another sandbox.backend',
    })
  }
  const aux = await auxChoice
  const check = await canary(backend, workRoot)
  if (check.result !== 'passed') {
    throw new HwError('sandbox_unavailable', 'the container backend failed its canary self-test', {
      where: 'sandbox.backend',
      details: check.seen,
    })
  }
  const rt = await backend.runtime()
  const notes = [
    `container runtime: ${rt.summary}`,
    ...aux.notes,
    `installs and workspace git jobs run in the ${aux.backend.kind} backend`,
  ]
  const removed = await backend.leftovers()
  if (removed.length > 0)
    notes.push(`removed ${removed.length} container(s) left by a crashed run: ${removed.join(', ')}`)
  return { backend, canary: 'passed', notes }
}

/**
 * What `validate` says about the sandbox on this machine (probes only, no canary): the backend a run
 * would use, or why it would stop. `ok` is false when a run here would fail closed.
 */
export async function describeSandbox(
  setting: SandboxSetting,
  table: Record<HostIsolation, SandboxBackend> = BACKENDS,
): Promise<{ ok: boolean; line: string }> {
  if (setting.backend === 'none' || setting.backend === 'env-only') {
    return { ok: true, line: `sandbox: ${setting.backend} (opted in: harnesses are not isolated)` }
  }
  if (setting.backend === 'container') {
    const c = setting.container ?? defaultContainerSetting()
    const p = await containerBackend(c, async () => table.none).probe()
    return p.ok
      ? { ok: true, line: `sandbox: container (${p.reason}); image ${c.image}` }
      : { ok: false, line: `sandbox: container backend unavailable here: ${p.reason}` }
  }
  const wanted: readonly HostIsolation[] = setting.backend === 'auto' ? ISOLATING : [setting.backend]
  const reasons: string[] = []
  for (const kind of wanted) {
    const probe = await table[kind].probe()
    if (probe.ok) return { ok: true, line: `sandbox: ${kind} available here (canary checked at run time)` }
    reasons.push(`${kind}: ${probe.reason ?? 'probe failed'}`)
  }
  if (setting.allow_unisolated) {
    return { ok: true, line: `sandbox: env-only here (not isolation; ${reasons.join('; ')})` }
  }
  return {
    ok: false,
    line: `sandbox: no isolating backend here (${reasons.join('; ')}); a run on this machine stops before its first attempt unless sandbox.allow_unisolated is set`,
  }
}

/** Forget chosen backends (tests). */
export function resetSandboxChoices(): void {
  choices.clear()
}
