import os from 'node:os'
import path from 'node:path'
import type { AttemptContext } from './contract.js'

/** System folders every harness may need (git, bash, coreutils); the runner's own PATH never leaks in. */
const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']

/**
 * PATH for a harness process: the extra folders first, then the folder of the Node that runs Harness
 * Watch (npm harnesses start with `#!/usr/bin/env node`), then the system folders.
 */
export function harnessPath(extra: readonly string[] = []): string {
  const dirs = [...extra, path.dirname(process.execPath), ...SYSTEM_PATH]
  return [...new Set(dirs)].join(':')
}

/**
 * The isolation variables of one attempt: HOME, every XDG_* folder and TMPDIR inside the attempt's
 * fresh home/tmp, a fixed locale and time zone, no colours, CI=1. Only these, the harness's own
 * variables and the cell's `config.env` / `config.pass_env` reach the harness (harnesses.md §1:
 * "nothing from the caller's environment leaks in").
 */
export function isolationEnv(ctx: Pick<AttemptContext, 'home' | 'tmp'>, extraPath: string[] = []) {
  const user = safeUser()
  return {
    PATH: harnessPath(extraPath),
    HOME: ctx.home,
    USER: user,
    LOGNAME: user,
    SHELL: '/bin/bash',
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    XDG_CONFIG_HOME: path.join(ctx.home, '.config'),
    XDG_DATA_HOME: path.join(ctx.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(ctx.home, '.cache'),
    XDG_STATE_HOME: path.join(ctx.home, '.local', 'state'),
    TMPDIR: ctx.tmp,
    NO_COLOR: '1',
    CI: '1',
  } satisfies Record<string, string>
}

function safeUser(): string {
  try {
    return os.userInfo().username
  } catch {
    return 'runner'
  }
}

/**
 * The final environment of an attempt: isolation variables, then the harness's own variables, then
 * the runner variables the cell allowlists in `config.pass_env` (absent ones are skipped), then the
 * cell's `config.env` (the cell has the last word).
 */
export function attemptEnv(
  ctx: Pick<AttemptContext, 'home' | 'tmp' | 'config'>,
  harnessEnv: Record<string, string>,
  opts: { extraPath?: string[]; runnerEnv?: NodeJS.ProcessEnv } = {},
): Record<string, string> {
  const env: Record<string, string> = { ...isolationEnv(ctx, opts.extraPath ?? []), ...harnessEnv }
  const runner = opts.runnerEnv ?? process.env
  for (const name of ctx.config.pass_env ?? []) {
    const v = runner[name]
    if (v !== undefined) env[name] = v
  }
  return { ...env, ...(ctx.config.env ?? {}) }
}
