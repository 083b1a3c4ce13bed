import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { claimSlot, releaseSlot } from '../../src/sandbox/slots.js'

// Sandbox slots decide which unprivileged user a sandbox runs as; closing a sandbox kills every
// process of its user, so two sandboxes open at once must never share a slot.

let dir = ''
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})
const fresh = (): string => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'hw-slots-'))
  return dir
}

describe('sandbox slots', () => {
  it('claims made at once in one process get distinct slots, and a released slot is reused', async () => {
    const d = fresh()
    const slots = await Promise.all(Array.from({ length: 12 }, () => claimSlot(d)))
    expect(new Set(slots).size).toBe(12)
    expect([...slots].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    expect(
      readdirSync(d)
        .filter((n) => !n.endsWith('.pid'))
        .sort(),
    ).toEqual(slots.map((s) => `${s}.${process.pid}`).sort())
    await releaseSlot(5, d)
    expect(await claimSlot(d)).toBe(5)
    for (const s of slots) await releaseSlot(s, d)
    expect(readdirSync(d)).toEqual([])
  })

  it("skips a slot another live process holds and takes over a dead process's claim", async () => {
    const d = fresh()
    mkdirSync(d, { recursive: true })
    // A live holder (a child of ours) on slot 0; a process that exited long ago on slot 1.
    const live = spawn('sleep', ['30'], { stdio: 'ignore' })
    const dead = spawn('true', [], { stdio: 'ignore' })
    await new Promise((r) => dead.once('exit', r))
    try {
      writeFileSync(path.join(d, `0.${live.pid}`), '')
      writeFileSync(path.join(d, `1.${dead.pid}`), '')
      expect(await claimSlot(d)).toBe(1)
      expect(readdirSync(d).sort()).toEqual([`0.${live.pid}`, `1.${process.pid}`, '1.pid'].sort())
      await releaseSlot(1, d)
      expect(readdirSync(d)).toEqual([`0.${live.pid}`])
    } finally {
      live.kill('SIGKILL')
    }
  })

  it('fails with a clear error when every slot is in use', async () => {
    const d = fresh()
    const a = await claimSlot(d, 2)
    const b = await claimSlot(d, 2)
    await expect(claimSlot(d, 2)).rejects.toThrow('no free sandbox slot (2 in use)')
    await releaseSlot(a, d)
    await releaseSlot(b, d)
  })

  it("honours an earlier version's `<slot>.pid` claim of a live process, and writes its own there", async () => {
    const d = fresh()
    const live = spawn('sleep', ['30'], { stdio: 'ignore' })
    try {
      writeFileSync(path.join(d, '0.pid'), String(live.pid))
      writeFileSync(path.join(d, '1.pid'), '999999999')
      expect(await claimSlot(d)).toBe(1)
      expect(readFileSync(path.join(d, '1.pid'), 'utf8')).toBe(String(process.pid))
      expect(readFileSync(path.join(d, '0.pid'), 'utf8')).toBe(String(live.pid))
      await releaseSlot(1, d)
      expect(readdirSync(d)).toEqual(['0.pid'])
    } finally {
      live.kill('SIGKILL')
    }
  })
})

describe('the slot registry is machine-wide', () => {
  it('is one fixed folder, whatever TMPDIR says', async () => {
    const { slotDir } = await import('../../src/sandbox/slots.js')
    const before = process.env.TMPDIR
    process.env.TMPDIR = mkdtempSync(path.join(os.tmpdir(), 'hw-other-tmp-'))
    try {
      expect(os.tmpdir()).not.toBe('/tmp')
      expect(slotDir()).toBe('/tmp/harness-watch-slots')
    } finally {
      if (before === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = before
    }
  })

  it('two processes with different TMPDIR, holding their claims at once, get different slots', async () => {
    const slotsModule = path.resolve(import.meta.dirname, '../../src/sandbox/slots.ts')
    // Each child claims a slot from the default registry, reports it, and holds it until stdin ends.
    const script = [
      `const { claimSlot, releaseSlot } = await import(${JSON.stringify(slotsModule)})`,
      'const slot = await claimSlot()',
      'process.stdout.write(`${slot}\\n`)',
      'process.stdin.resume()',
      "process.stdin.on('end', async () => { await releaseSlot(slot); process.exit(0) })",
    ].join('\n')
    const start = (tmp: string) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, TMPDIR: tmp },
        stdio: ['pipe', 'pipe', 'inherit'],
      })
      const slot = new Promise<number>((resolve, reject) => {
        child.stdout.once('data', (b: Buffer) => resolve(Number(String(b).trim())))
        child.once('exit', (code) => reject(new Error(`child exited (${code}) before claiming`)))
      })
      return { child, slot }
    }
    const a = start(mkdtempSync(path.join(os.tmpdir(), 'hw-tmp-a-')))
    const b = start(mkdtempSync(path.join(os.tmpdir(), 'hw-tmp-b-')))
    try {
      const [sa, sb] = await Promise.all([a.slot, b.slot])
      expect(Number.isInteger(sa) && Number.isInteger(sb)).toBe(true)
      expect(sa).not.toBe(sb)
      expect(readdirSync('/tmp/harness-watch-slots')).toEqual(
        expect.arrayContaining([`${sa}.${a.child.pid}`, `${sb}.${b.child.pid}`]),
      )
    } finally {
      for (const c of [a.child, b.child]) {
        const exited = new Promise((r) => c.once('exit', r))
        c.stdin?.end()
        await exited
      }
    }
  }, 60_000)
})
