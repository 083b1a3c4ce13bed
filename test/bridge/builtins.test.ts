import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bashTool } from '../../src/bridge/builtins/bash.js'
import { readFileTool, writeFileTool } from '../../src/bridge/builtins/files.js'

let dir: string
let root: string
let outside: string
beforeEach(() => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'hw-builtins-')))
  root = path.join(dir, 'sandbox')
  outside = path.join(dir, 'outside')
  mkdirSync(root)
  mkdirSync(outside)
  writeFileSync(path.join(outside, 'secret.txt'), 'TOP-SECRET')
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('read_file / write_file confinement', () => {
  it('reads and writes inside the sandbox, creating folders', async () => {
    expect((await writeFileTool(root, { path: 'a/b/c.txt', content: 'héllo' })).status).toBe('ok')
    expect(readFileSync(path.join(root, 'a/b/c.txt'), 'utf8')).toBe('héllo')
    expect(await readFileTool(root, { path: 'a/b/c.txt' })).toEqual({ status: 'ok', text: 'héllo' })
  })

  it.each([['../outside/secret.txt'], ['a/../../outside/secret.txt'], [`${'../'.repeat(20)}etc/passwd`]])(
    'refuses traversal %s',
    async (p) => {
      const r = await readFileTool(root, { path: p })
      expect(r).toMatchObject({ status: 'error', code: 'refused' })
      expect(r.text).not.toContain('TOP-SECRET')
      expect((await writeFileTool(root, { path: p, content: 'x' })).code).toBe('refused')
      expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP-SECRET')
    },
  )

  it('refuses absolute paths', async () => {
    expect((await readFileTool(root, { path: path.join(outside, 'secret.txt') })).code).toBe('refused')
  })

  it('refuses a symlinked file and a symlinked folder pointing out, for reading and writing', async () => {
    symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'))
    symlinkSync(outside, path.join(root, 'dirlink'))
    for (const p of ['link.txt', 'dirlink/secret.txt', 'dirlink/new.txt']) {
      expect((await readFileTool(root, { path: p })).status).toBe('error')
      expect((await writeFileTool(root, { path: p, content: 'overwritten' })).code).toBe('refused')
    }
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP-SECRET')
  })

  it('refuses a symlink inside the sandbox too (no link is followed on the last component)', async () => {
    writeFileSync(path.join(root, 'real.txt'), 'R')
    symlinkSync(path.join(root, 'real.txt'), path.join(root, 'inner.txt'))
    expect((await writeFileTool(root, { path: 'inner.txt', content: 'x' })).code).toBe('refused')
    expect(readFileSync(path.join(root, 'real.txt'), 'utf8')).toBe('R')
  })

  it('reports a missing file and a folder as tool errors', async () => {
    expect((await readFileTool(root, { path: 'nope.txt' })).code).toBe('not_found')
    mkdirSync(path.join(root, 'd'))
    expect((await readFileTool(root, { path: 'd' })).code).toBe('not_a_file')
  })
})

describe('bash', () => {
  it('runs in the sandbox with an allowlisted environment', async () => {
    process.env.HW_TEST_SECRET = 'sk-should-not-leak'
    try {
      const r = await bashTool(root, { command: 'pwd; echo "[$HW_TEST_SECRET]"; exit 3' }, 5)
      expect(r.status).toBe('ok')
      expect(r.text).toBe(`exit 3\n${root}\n[]\n`)
    } finally {
      delete process.env.HW_TEST_SECRET
    }
  })

  it('kills the whole process group at the timeout', async () => {
    const marker = path.join(root, 'late')
    const r = await bashTool(root, { command: `(sleep 1; touch ${marker}) & sleep 30` }, 0.3)
    expect(r).toMatchObject({ status: 'error', code: 'timeout' })
    await new Promise((res) => setTimeout(res, 1300))
    expect(() => readFileSync(marker)).toThrow()
  }, 10_000)

  it('cuts output at 64 KiB', async () => {
    const r = await bashTool(root, { command: 'head -c 200000 /dev/zero | tr "\\0" a' }, 5)
    expect(r.text.length).toBeLessThan(66 * 1024)
    expect(r.text).toContain('[output cut at 64 KiB]')
  })
})
