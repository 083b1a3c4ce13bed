import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  assertExactVersion,
  defaultCacheDir,
  installDir,
  installNpm,
  installPip,
  MARKER,
  type NpmHarnessSpec,
  sanitizePackage,
} from '../../src/harnesses/install.js'
import { modulePath } from '../../src/harnesses/native.js'

// A real, tiny npm package (no dependencies) exercises the cache, lock and marker logic quickly.
const spec: NpmHarnessSpec = {
  harness: 'command',
  package: 'is-number',
  resolveBin: (root) => modulePath(root, 'is-number', 'index.js'),
}

describe('harness install cache', () => {
  let cacheDir: string
  let lines: string[]
  const ctx = () => ({ cacheDir, log: (l: string) => lines.push(l) })
  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'hw-cache-'))
    lines = []
  })
  afterEach(async () => {
    await rm(cacheDir, { recursive: true, force: true })
  })

  it('names folders <sanitized-package>@<version>', () => {
    expect(sanitizePackage('@openai/codex')).toBe('@openai__codex')
    expect(installDir('/c', '@mariozechner/pi-coding-agent', '0.73.1')).toBe(
      '/c/@mariozechner__pi-coding-agent@0.73.1',
    )
  })

  it('installs once, writes the marker last, and reuses the folder afterwards', async () => {
    const first = await installNpm(spec, '7.0.0', ctx())
    expect(first).toEqual({
      harness: 'command',
      version: '7.0.0',
      root: path.join(cacheDir, 'is-number@7.0.0'),
      bin: path.join(cacheDir, 'is-number@7.0.0', 'node_modules', 'is-number', 'index.js'),
    })
    expect(existsSync(first.bin)).toBe(true)
    const marker = JSON.parse(await readFile(path.join(first.root, MARKER), 'utf8'))
    expect(marker).toMatchObject({ package: 'is-number', version: '7.0.0', bin: first.bin })
    expect(marker.bytes).toBeGreaterThan(1000)
    expect(lines.filter((l) => l.startsWith('installing '))).toHaveLength(1)
    expect(lines.some((l) => /^installed is-number@7\.0\.0 in \d+\.\d s/.test(l))).toBe(true)
    // npm ran with a scratch HOME (removed afterwards) and a download cache shared in the cache dir.
    expect(existsSync(path.join(first.root, '.install-home'))).toBe(false)
    expect(existsSync(path.join(cacheDir, '.npm'))).toBe(true)

    lines = []
    const again = await installNpm(spec, '7.0.0', ctx())
    expect(again).toEqual(first)
    expect(lines).toEqual([])
    const after = JSON.parse(await readFile(path.join(first.root, MARKER), 'utf8'))
    expect(after.installed_at).toBe(marker.installed_at)
  })

  it('two legs installing the same package at once run npm once', async () => {
    const [a, b] = await Promise.all([installNpm(spec, '7.0.0', ctx()), installNpm(spec, '7.0.0', ctx())])
    expect(a).toEqual(b)
    expect(lines.filter((l) => l.startsWith('installing '))).toHaveLength(1)
    expect(lines.filter((l) => l.startsWith('waiting for another install'))).toHaveLength(1)
  })

  it('redoes a half-finished install (no marker), wiping a folder npm never completed', async () => {
    const root = installDir(cacheDir, 'is-number', '7.0.0')
    await mkdir(path.join(root, 'node_modules', 'is-number'), { recursive: true })
    await writeFile(path.join(root, 'node_modules', 'is-number', 'partial.txt'), 'half')
    const done = await installNpm(spec, '7.0.0', ctx())
    expect(existsSync(path.join(root, 'node_modules', 'is-number', 'partial.txt'))).toBe(false)
    expect(existsSync(done.bin)).toBe(true)
    expect(existsSync(path.join(root, MARKER))).toBe(true)
  })

  it('takes over a stale lock left by a killed install', async () => {
    const root = installDir(cacheDir, 'is-number', '7.0.0')
    await mkdir(`${root}.lock`, { recursive: true })
    const old = new Date(Date.now() - 5 * 60_000)
    await utimes(`${root}.lock`, old, old)
    const done = await installNpm(spec, '7.0.0', ctx())
    expect(existsSync(done.bin)).toBe(true)
  })

  it('refuses ranges and tags, and reports a version npm does not have', async () => {
    expect(() => assertExactVersion('pi', 'latest')).toThrow(/not an exact version/)
    expect(() => assertExactVersion('pi', '^0.73.1')).toThrow(/not an exact version/)
    expect(() => assertExactVersion('pi', '0.73.1')).not.toThrow()
    expect(() => assertExactVersion('pi', '1.0.0-nightly.20260101')).not.toThrow()
    await expect(installNpm(spec, 'latest', ctx())).rejects.toMatchObject({ code: 'bad_version' })
    const err = await installNpm(spec, '999.0.0', ctx()).catch((e) => e)
    expect(err).toMatchObject({ code: 'install_failed' })
    expect(err.message).toBe('npm install is-number@999.0.0 failed (exit 1)')
    expect(err.details.join('\n')).toMatch(/ETARGET|No matching version/)
    expect(existsSync(path.join(installDir(cacheDir, 'is-number', '999.0.0'), MARKER))).toBe(false)
  })

  it('an install without the expected executable is install_failed, not a marker', async () => {
    const wrong = { ...spec, resolveBin: (root: string) => path.join(root, 'no-such-binary') }
    await expect(installNpm(wrong, '7.0.0', ctx())).rejects.toMatchObject({
      code: 'install_failed',
      message: expect.stringContaining('no-such-binary is missing'),
    })
    expect(existsSync(path.join(installDir(cacheDir, 'is-number', '7.0.0'), MARKER))).toBe(false)
  })

  it('a Python harness whose package cannot be fetched fails with install_failed naming PyPI', async () => {
    // --no-index makes the outcome independent of whether this machine can reach pypi.org.
    const err = await installPip(
      { harness: 'mini-swe-agent', package: 'mini-swe-agent', script: 'mini' },
      '2.2.0',
      ctx(),
      {
        pipArgs: ['--no-index'],
      },
    ).catch((e) => e)
    expect(err).toMatchObject({ code: 'install_failed' })
    expect(err.message).toMatch(/PyPI not reachable|cannot create a Python virtualenv/)
    expect(err.help).toContain('mini-swe-agent')
  }, 120_000)

  it('defaults to $HW_CACHE_DIR, else ~/.cache/harness-watch/harnesses', () => {
    expect(defaultCacheDir({ HW_CACHE_DIR: '/x/y' })).toBe('/x/y')
    expect(defaultCacheDir({})).toBe(path.join(os.homedir(), '.cache', 'harness-watch', 'harnesses'))
  })
})
