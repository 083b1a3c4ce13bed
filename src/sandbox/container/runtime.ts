import { execa } from 'execa'

/** A container engine's CLI as probed (probe.ts): which binary, with which settings. */
export interface ContainerRuntime {
  /** docker or podman. */
  name: 'docker' | 'podman'
  /** The CLI to run (found on PATH). */
  bin: string
  /** The engine's version (the daemon's for docker), else the CLI's. */
  version: string
  /** Variables every call gets on top of the allowlist (podman: CONTAINERS_CONF with the chosen settings). */
  env: Record<string, string>
  /** Flags every `run` gets (ulimits under the host's hard limits, an OCI runtime that works here). */
  runFlags: string[]
  /** cgroup version the engine reports. */
  cgroup: 'v1' | 'v2'
  /** The OCI runtime the engine uses (runc, crun), as reported. */
  ociRuntime: string
  rootless: boolean
  /** Docker with `userns-remap`: containers run in a user namespace of the daemon's remap user. */
  userns: boolean
  /** Whether `--uidmap` is available (podman): container root is then an unprivileged host id. */
  idMap: boolean
  /** One line for the report: what was probed and chosen. */
  summary: string
}

/**
 * The environment of a runtime CLI call: PATH and what the runtime must see to reach its engine
 * (DOCKER_HOST, DOCKER_CONTEXT, DOCKER_CONFIG, CONTAINER_HOST…, so a remote engine works), never the
 * rest of the runner's environment.
 */
export function cliEnv(
  extra: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const keep = [
    'PATH',
    'HOME',
    'XDG_RUNTIME_DIR',
    'XDG_CONFIG_HOME',
    'DOCKER_HOST',
    'DOCKER_CONTEXT',
    'DOCKER_CONFIG',
    'DOCKER_CERT_PATH',
    'DOCKER_TLS_VERIFY',
    'CONTAINER_HOST',
    'CONTAINER_CONNECTION',
    'CONTAINER_SSHKEY',
    'TMPDIR',
  ]
  const out: Record<string, string> = {}
  for (const k of keep) {
    const v = env[k]
    if (v !== undefined) out[k] = v
  }
  return { ...out, ...extra }
}

/** What one CLI call printed and how it ended; never throws for the command's failure. */
export interface CliResult {
  exitCode: number | null
  stdout: string
  stderr: string
  timedOut: boolean
  /** The CLI could not be started (ENOENT: not installed). */
  missing: boolean
}

/** Run `<bin> <args>` with the runtime's environment; output kept in full, exit code reported. */
export async function cli(
  bin: string,
  args: readonly string[],
  opts: { env?: Record<string, string>; timeoutMs?: number; input?: string; signal?: AbortSignal } = {},
): Promise<CliResult> {
  const r = await execa(bin, [...args], {
    env: cliEnv(opts.env ?? {}),
    extendEnv: false,
    reject: false,
    timeout: opts.timeoutMs ?? 120_000,
    input: opts.input,
    stdin: opts.input === undefined ? 'ignore' : undefined,
    cancelSignal: opts.signal,
    forceKillAfterDelay: 2000,
    stripFinalNewline: true,
  })
  const missing = (r as { code?: string }).code === 'ENOENT'
  return {
    exitCode: r.exitCode ?? null,
    stdout: String(r.stdout ?? ''),
    stderr: String(r.stderr ?? ''),
    timedOut: r.timedOut === true,
    missing,
  }
}

/** Run a runtime CLI call; throws an Error carrying the CLI's last stderr lines when it fails. */
export async function must(
  rt: Pick<ContainerRuntime, 'bin' | 'env'>,
  args: readonly string[],
  timeoutMs?: number,
): Promise<string> {
  const r = await cli(rt.bin, args, { env: rt.env, timeoutMs })
  if (r.exitCode !== 0) {
    throw new Error(
      `${rt.bin} ${args[0]} failed${r.timedOut ? ' (timed out)' : ''}: ${lastLines(r.stderr || r.stdout, 3)}`,
    )
  }
  return r.stdout
}

/** The last `n` non-empty lines of a command's output, joined with " | ". */
export function lastLines(text: string, n: number): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(' | ')
}
