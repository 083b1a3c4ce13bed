/** The isolated folders of one attempt (see workspace.ts). */
export interface IsolationDirs {
  home: string
  tmp: string
  xdgConfig: string
  xdgData: string
  xdgCache: string
  xdgState: string
}

export interface HarnessEnvInput {
  dirs: IsolationDirs
  /** The runner's environment: only PATH and the names in `passEnv` are read from it. */
  runnerEnv: NodeJS.ProcessEnv
  /** Variables the adapter needs (Invocation.env). */
  invocationEnv: Record<string, string>
  /** The cell's config.env. */
  configEnv: Record<string, string>
  /** The cell's config.pass_env: runner variables passed through by name. */
  passEnv: readonly string[]
}

export interface HarnessEnv {
  env: Record<string, string>
  /** pass_env names the runner does not have (left out, reported once per leg). */
  missing: string[]
}

/** Variables every harness gets, fixed so that locale and terminal never differ between cells. */
export const FIXED_ENV: Readonly<Record<string, string>> = {
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TERM: 'dumb',
}

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin'

/**
 * The complete environment of a harness process: an allowlist, never the runner's environment.
 * PATH (the runner's), RUNNER_TRACKING_ID when the runner has one (its orphan cleanup), LANG/LC_ALL=C.UTF-8, TERM=dumb; then the adapter's variables, the cell's
 * config.env, and the runner variables named in config.pass_env, in that order of precedence; then, last
 * and always winning, the isolation variables HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME,
 * XDG_STATE_HOME and TMPDIR pointing into the attempt's fresh home — so no harness ever reads the user's
 * own settings or stored credentials (field case F14). Pure.
 */
export function harnessEnv(input: HarnessEnvInput): HarnessEnv {
  const missing: string[] = []
  const passed: Record<string, string> = {}
  for (const name of input.passEnv) {
    const v = input.runnerEnv[name]
    if (v === undefined) missing.push(name)
    else passed[name] = v
  }
  const d = input.dirs
  // Not a credential: the Actions runner's job marker. Its orphan cleanup kills, at job end, every
  // process of its user whose environment holds it; harness trees that escaped us are found that way.
  const tracking = input.runnerEnv.RUNNER_TRACKING_ID
  return {
    env: {
      PATH: input.runnerEnv.PATH ?? DEFAULT_PATH,
      ...(tracking ? { RUNNER_TRACKING_ID: tracking } : {}),
      ...FIXED_ENV,
      ...input.invocationEnv,
      ...input.configEnv,
      ...passed,
      HOME: d.home,
      XDG_CONFIG_HOME: d.xdgConfig,
      XDG_DATA_HOME: d.xdgData,
      XDG_CACHE_HOME: d.xdgCache,
      XDG_STATE_HOME: d.xdgState,
      TMPDIR: d.tmp,
    },
    missing,
  }
}
