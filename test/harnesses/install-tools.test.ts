import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { npmCli, pythonRoots, resolveOnPath } from '../../src/harnesses/install-tools.js'

// Where the sandboxed installs find npm and Python, and which folders a sandbox must expose for them.

let dir = ''
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** A fake prefix under the temporary folder (hidden in a sandbox): <dir>/p/bin/<name> → real file. */
function fakeTool(name: string, target: string): string {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hw-tools-'))
  const real = path.join(dir, 'p', target)
  mkdirSync(path.dirname(real), { recursive: true })
  writeFileSync(real, '#!/bin/sh\n', { mode: 0o755 })
  mkdirSync(path.join(dir, 'bin'), { recursive: true })
  symlinkSync(real, path.join(dir, 'bin', name))
  return path.join(dir, 'bin')
}

describe('npmCli', () => {
  it('runs npm-cli.js with this Node when it ships next to it, exposing only the npm package', () => {
    const cli = npmCli('')
    if (cli.root === null) {
      // This Node has no npm beside it: npm comes from PATH.
      expect(cli).toEqual({ command: 'npm', args: [], root: null })
      return
    }
    expect(cli.command).toBe(process.execPath)
    expect(cli.args).toEqual([path.join(cli.root, 'bin', 'npm-cli.js')])
    expect(path.basename(cli.root)).toBe('npm')
  })

  it('falls back to the npm-cli.js behind `npm` on PATH, never to an unrelated file', () => {
    const bin = fakeTool('npm', 'lib/node_modules/npm/bin/npm-cli.js')
    const cli = npmCli(bin)
    // The one next to process.execPath wins when present; else the PATH one.
    expect([path.join(dir, 'p', 'lib', 'node_modules', 'npm'), npmCli('').root]).toContain(cli.root)
    rmSync(dir, { recursive: true, force: true })
    const other = fakeTool('npm', 'bin/not-npm.sh')
    expect(npmCli(other).root).toBe(npmCli('').root)
  })
})

describe('pythonRoots', () => {
  it('exposes the prefix of an interpreter that lives under a hidden folder, nothing for a system one', () => {
    const bin = fakeTool('python3', 'bin/python3.12')
    expect(pythonRoots('python3', bin)).toEqual([path.join(dir, 'p')])
    expect(pythonRoots(path.join(bin, 'python3'))).toEqual([path.join(dir, 'p')])
    expect(pythonRoots('/usr/bin/python3')).toEqual([])
    expect(pythonRoots('no-such-python', bin)).toEqual([])
  })

  it('never exposes a whole temporary folder or home for an interpreter kept directly in one', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hw-tools-'))
    // <tmp>/<dir>/python3: its "prefix" would be the temporary folder itself.
    writeFileSync(path.join(dir, 'python3'), '#!/bin/sh\n', { mode: 0o755 })
    expect(path.dirname(dir)).toBe(os.tmpdir())
    expect(pythonRoots(path.join(dir, 'python3'))).toEqual([])
  })

  it('resolveOnPath: the first PATH folder holding the name; absolute or unknown names unchanged', () => {
    const bin = fakeTool('tool', 'bin/tool')
    expect(resolveOnPath('tool', `/nonexistent:${bin}`)).toBe(path.join(bin, 'tool'))
    expect(resolveOnPath('/abs/tool', bin)).toBe('/abs/tool')
    expect(resolveOnPath('missing', bin)).toBe('missing')
  })
})
