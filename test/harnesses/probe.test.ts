import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { attemptEnv, harnessPath } from '../../src/harnesses/env.js'
import { parseVersion, probeCliVersion } from '../../src/harnesses/probe.js'
import { plantCanaries } from './helpers.js'

describe('parseVersion', () => {
  it('finds the version in the shapes harness CLIs print', () => {
    expect(parseVersion('0.73.1\n')).toBe('0.73.1')
    expect(parseVersion('codex-cli 0.171.0')).toBe('0.171.0')
    expect(parseVersion('2.1.332 (Claude Code)')).toBe('2.1.332')
    expect(parseVersion("GitHub Copilot CLI 1.0.102.\nRun 'copilot update' to check for updates.")).toBe(
      '1.0.102',
    )
    expect(parseVersion('OpenHands CLI v1.15.0')).toBe('1.15.0')
    expect(parseVersion('qwen 0.24.4-nightly.20260101')).toBe('0.24.4-nightly.20260101')
    expect(parseVersion('no version here')).toBeNull()
  })
})

describe('probeCliVersion', () => {
  let dir: string
  let restore: () => void
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hw-probe-test-'))
    restore = plantCanaries()
  })
  afterEach(async () => {
    restore()
    await rm(dir, { recursive: true, force: true })
  })

  it('runs <cli> --version in an isolated throw-away home with only the given variables', async () => {
    const cli = path.join(dir, 'fake-cli')
    const envOut = path.join(dir, 'env.txt')
    await writeFile(
      cli,
      `#!/bin/sh\n[ "$1" = --version ] || exit 3\nenv > ${envOut}\necho "fake-cli 4.5.6"\n`,
    )
    await chmod(cli, 0o755)
    expect(await probeCliVersion(cli, [], { QUIET: '1' })).toBe('4.5.6')
    const env = Object.fromEntries(
      (await readFile(envOut, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    )
    expect(env.QUIET).toBe('1')
    expect(env.HW_LEAK_CANARY).toBeUndefined()
    expect(env.HOME).not.toBe(os.homedir())
    expect(env.HOME?.startsWith(os.tmpdir())).toBe(true)
  })

  it('is null when the CLI fails or prints no version', async () => {
    const cli = path.join(dir, 'broken')
    await writeFile(cli, '#!/bin/sh\necho oops >&2\nexit 2\n')
    await chmod(cli, 0o755)
    expect(await probeCliVersion(cli, [])).toBeNull()
    expect(await probeCliVersion(path.join(dir, 'missing'), [])).toBeNull()
  })
})

describe('attempt environment', () => {
  it('layers isolation, harness variables, pass_env and the cell env (last word to the cell)', () => {
    const env = attemptEnv(
      {
        home: '/h',
        tmp: '/t',
        config: { args: [], env: { TERM: 'xterm', X: 'cell' }, pass_env: ['KEEP', 'ABSENT'], files: {} },
      },
      { X: 'harness', Y: 'harness' },
      { runnerEnv: { KEEP: 'kept', OTHER: 'secret' }, extraPath: ['/venv/bin'] },
    )
    expect(env).toMatchObject({
      HOME: '/h',
      TMPDIR: '/t',
      XDG_DATA_HOME: '/h/.local/share',
      X: 'cell',
      Y: 'harness',
    })
    expect(env.TERM).toBe('xterm')
    expect(env.KEEP).toBe('kept')
    expect('ABSENT' in env).toBe(false)
    expect('OTHER' in env).toBe(false)
    expect(env.PATH?.split(':')[0]).toBe('/venv/bin')
    expect(harnessPath().split(':')).toContain(path.dirname(process.execPath))
  })
})
