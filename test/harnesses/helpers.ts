import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { afterEach, beforeEach } from 'vitest'
import type { AttemptContext } from '../../src/harnesses/contract.js'
import type { WireApi } from '../../src/manifest/harness-names.js'

/** The folders of one attempt: `base` holds the other three. */
export interface AttemptDirs {
  base: string
  workspace: string
  home: string
  tmp: string
}

/** A fresh attempt layout (workspace git repo, empty home, tmp) under one temp folder. */
export async function attemptDirs(): Promise<AttemptDirs> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'hw-adapter-'))
  const workspace = path.join(base, 'work')
  const home = path.join(base, 'home')
  const tmp = path.join(base, 'tmp')
  for (const d of [workspace, home, tmp]) await mkdir(d, { recursive: true })
  return { base, workspace, home, tmp }
}

export async function cleanup(base: string): Promise<void> {
  await rm(base, { recursive: true, force: true })
}

/** An AttemptContext with recognisable values (origin port 4555, key sk-hw-attempt-1). */
export function makeCtx(
  dirs: { workspace: string; home: string; tmp: string },
  over: Partial<AttemptContext> = {},
): AttemptContext {
  return {
    workspace: dirs.workspace,
    home: dirs.home,
    tmp: dirs.tmp,
    prompt: 'Fix the bug in "add.py" — it\'s $HOME-safe?\nSecond line.',
    model: 'claude-sonnet-4-5',
    api: 'chat' as WireApi,
    endpoint: { origin: 'http://127.0.0.1:4555', apiKey: 'sk-hw-attempt-1' },
    config: { args: [], env: {}, pass_env: [], files: {} },
    timeoutS: 120,
    ...over,
  }
}

/** Initialise a git repo with one commit in `dir`. */
export async function gitInit(dir: string, files: Record<string, string> = { 'README.md': '# demo\n' }) {
  const { writeFile } = await import('node:fs/promises')
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true })
    await writeFile(path.join(dir, rel), text)
  }
  const git = (...args: string[]) => execa('git', args, { cwd: dir })
  await git('init', '-q', '-b', 'main')
  await git('add', '-A')
  await git('-c', 'user.name=hw', '-c', 'user.email=hw@example.invalid', 'commit', '-q', '-m', 'init')
}

/**
 * Runner variables planted before `prepare` and looked for afterwards: a harness must never see the
 * runner's secrets or settings (field case F14: stored credentials bypassing the proxy).
 */
export const CANARIES: Record<string, string> = {
  HW_LEAK_CANARY: 'leaked',
  OPENAI_API_KEY: 'sk-runner-secret',
  ANTHROPIC_API_KEY: 'sk-ant-runner-secret',
  GEMINI_API_KEY: 'runner-gemini-secret',
  GITHUB_TOKEN: 'ghp_runnersecret',
}

export function plantCanaries(): () => void {
  const saved: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(CANARIES)) {
    saved[k] = process.env[k]
    process.env[k] = v
  }
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
}

/**
 * The per-test setup of an adapter suite: before each test a fresh attempt layout and the runner
 * canaries planted; after it the canaries removed and the layout deleted. Call inside `describe`; the
 * returned object is refilled before every test, so tests read `dirs.home` etc. as usual.
 */
export function useAttemptDirs(): AttemptDirs {
  const dirs: AttemptDirs = { base: '', workspace: '', home: '', tmp: '' }
  let restore: () => void = () => {}
  beforeEach(async () => {
    Object.assign(dirs, await attemptDirs())
    restore = plantCanaries()
  })
  afterEach(async () => {
    restore()
    await cleanup(dirs.base)
  })
  return dirs
}

/** Canary names or values found in an environment (expected: none). */
export function leaks(env: Record<string, string>): string[] {
  const found: string[] = []
  for (const [k, v] of Object.entries(env)) {
    if (k === 'HW_LEAK_CANARY') found.push(k)
    if (Object.values(CANARIES).includes(v)) found.push(`${k}=${v}`)
  }
  return found
}

/** Text of a fixture under test/harnesses/fixtures/<harness>/. */
export async function fixture(harness: string, name: string): Promise<string> {
  const { readFile } = await import('node:fs/promises')
  return readFile(path.join(import.meta.dirname, 'fixtures', harness, name), 'utf8')
}

/** Keys every attempt environment holds (env.ts isolationEnv). */
export const ISOLATION_KEYS = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'LANG',
  'TZ',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_STATE_HOME',
  'TMPDIR',
  'NO_COLOR',
  'CI',
]

/** {@link ISOLATION_KEYS} plus the adapter's own variable names, sorted (to compare with sorted env keys). */
export function isolatedEnvKeys(...own: string[]): string[] {
  return [...ISOLATION_KEYS, ...own].sort()
}

/** A RawRun from fixture text. */
export function rawRun(
  stdout: string,
  over: { stderr?: string; exitCode?: number | null; home?: string } = {},
) {
  return {
    stdout,
    stderr: over.stderr ?? '',
    exitCode: over.exitCode === undefined ? 0 : over.exitCode,
    signal: null,
    home: over.home ?? '/nonexistent-home',
  }
}

/** An installed harness at a made-up cache path (prepare never runs it). */
export function fakeInstalled(harness: string, bin: string) {
  return { harness: harness as never, version: '1.0.0', bin, root: '/cache/fake-install' }
}
