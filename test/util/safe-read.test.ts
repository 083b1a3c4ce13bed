// Reading files named by untrusted artifacts: inside the folder, no symbolic link on the way, a
// regular file only — also when a batch of reads shares the folders it has already checked.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { checkInside, readInside, readInsideSync } from '../../src/util/safe-read.js'

function tree() {
  const root = mkdtempSync(path.join(tmpdir(), 'hw-safe-read-'))
  const outside = mkdtempSync(path.join(tmpdir(), 'hw-safe-read-outside-'))
  mkdirSync(path.join(root, 'leg', 'logs', 't-1'), { recursive: true })
  mkdirSync(path.join(root, 'leg', 'logs', 't-2'), { recursive: true })
  writeFileSync(path.join(root, 'leg', 'logs', 't-1', 'f.json'), 'one')
  writeFileSync(path.join(root, 'leg', 'logs', 't-2', 'f.json'), 'two')
  writeFileSync(path.join(outside, 'f.json'), 'secret')
  symlinkSync(outside, path.join(root, 'leg', 'logs', 't-3'))
  symlinkSync(path.join(outside, 'f.json'), path.join(root, 'leg', 'logs', 't-2', 'g.json'))
  return { root, outside }
}

const text = (r: Awaited<ReturnType<typeof readInside>>) =>
  typeof r === 'object' && 'bytes' in r ? r.bytes.toString('utf8') : r

describe('readInside', () => {
  it('reads regular files; refuses links, a way out and absolute paths; missing is missing', async () => {
    const { root } = tree()
    expect(text(await readInside(root, 'leg/logs/t-1/f.json'))).toBe('one')
    expect(await readInside(root, 'leg/logs/t-3/f.json')).toEqual({
      refused: 'leg/logs/t-3 is a symbolic link: not followed out of the folder',
    })
    expect(await readInside(root, 'leg/logs/t-2/g.json')).toEqual({
      refused: 'leg/logs/t-2/g.json is a symbolic link: not followed out of the folder',
    })
    expect(await readInside(root, 'leg/../../x')).toEqual({
      refused: 'leg/../../x leads out of the folder (..): refused',
    })
    expect(await readInside(root, '/etc/passwd')).toEqual({
      refused: '/etc/passwd is an absolute path: refused',
    })
    expect(await readInside(root, 'leg/logs/t-9/f.json')).toBe('missing')
    expect(await readInside(root, 'leg/logs')).toEqual({
      refused: 'leg/logs is not a regular file: not read',
    })
    expect(readInsideSync(root, 'leg/logs/t-3/f.json')).toEqual({
      refused: 'leg/logs/t-3 is a symbolic link: not followed out of the folder',
    })
    expect(checkInside(root, 'leg/logs/t-1/f.json')).toBeNull()
  })

  it('a batch sharing its checked folders reads the same files and refuses the same links', async () => {
    const { root } = tree()
    const folders = new Set<string>()
    expect(text(await readInside(root, 'leg/logs/t-1/f.json', folders))).toBe('one')
    expect([...folders].map((f) => path.relative(root, f)).sort()).toEqual([
      'leg',
      'leg/logs',
      'leg/logs/t-1',
    ])
    expect(text(await readInside(root, 'leg/logs/t-2/f.json', folders))).toBe('two')
    // A link below a checked folder, as a folder or as the file, is still refused.
    expect(await readInside(root, 'leg/logs/t-3/f.json', folders)).toEqual({
      refused: 'leg/logs/t-3 is a symbolic link: not followed out of the folder',
    })
    expect(await readInside(root, 'leg/logs/t-2/g.json', folders)).toEqual({
      refused: 'leg/logs/t-2/g.json is a symbolic link: not followed out of the folder',
    })
    expect(folders.has(path.join(root, 'leg', 'logs', 't-3'))).toBe(false)
  })

  it('a batch remembers the folders found missing: their files are missing without another lstat', async () => {
    const { root } = tree()
    const folders = new Set<string>()
    const absent = new Set<string>()
    expect(await readInside(root, 'leg/logs/t-9/f.json', folders, absent)).toBe('missing')
    expect([...absent].map((f) => path.relative(root, f))).toEqual(['leg/logs/t-9'])
    // A missing file in a real folder is not a missing folder.
    expect(await readInside(root, 'leg/logs/t-1/none.json', folders, absent)).toBe('missing')
    expect(absent.size).toBe(1)
    // The batch reads a snapshot: a folder that appears later is still missing to it (the cache
    // answered), and found by a read outside the batch.
    mkdirSync(path.join(root, 'leg', 'logs', 't-9'))
    writeFileSync(path.join(root, 'leg', 'logs', 't-9', 'f.json'), 'late')
    expect(await readInside(root, 'leg/logs/t-9/f.json', folders, absent)).toBe('missing')
    expect(text(await readInside(root, 'leg/logs/t-9/f.json'))).toBe('late')
    // Links are refused as before.
    expect(await readInside(root, 'leg/logs/t-3/f.json', folders, absent)).toEqual({
      refused: 'leg/logs/t-3 is a symbolic link: not followed out of the folder',
    })
  })

  it('a named pipe is refused, never opened (an open would block)', async () => {
    const { root } = tree()
    await execa('mkfifo', [path.join(root, 'leg', 'logs', 't-1', 'pipe')])
    expect(await readInside(root, 'leg/logs/t-1/pipe', new Set())).toEqual({
      refused: 'leg/logs/t-1/pipe is not a regular file: not read',
    })
  })
})
