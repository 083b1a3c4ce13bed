import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pidAlive } from '../util/pid.js'

/** Slots held by this process (reserved here before anything is awaited, so two claims never meet). */
const taken = new Set<number>()

/**
 * Where slot claims live: `/tmp/harness-watch-slots/<slot>.<pid>`, one empty file per claim. The slot
 * users (`hw-s<N>`) are machine-wide, so the registry is too: a fixed folder, never `os.tmpdir()` —
 * two runs with different TMPDIR once claimed the same user and killed each other's processes.
 */
export const SLOT_DIR = '/tmp/harness-watch-slots'
export function slotDir(): string {
  return SLOT_DIR
}

/**
 * Claim the lowest free sandbox slot (0‥max−1) for this process, so two sandboxes — of this process or
 * of two Harness Watch processes on one machine — never share a slot's user (closing one kills every
 * process of its user). A claim is the file `<slot>.<our pid>`, made first; the slot is ours when no
 * other claim of a live process exists afterwards (a later claimant sees ours and moves on; two at
 * once both move on). Claims of dead processes are removed; the older `<slot>.pid` claim is honoured
 * and kept in step (claimLegacy). Throws when every slot is in use.
 */
export async function claimSlot(dir: string = slotDir(), max = 256): Promise<number> {
  await openRegistry(dir)
  for (let slot = 0; slot < max; slot++) {
    if (taken.has(slot)) continue
    taken.add(slot)
    if (await claimOnDisk(dir, slot)) return slot
    taken.delete(slot)
  }
  throw new Error(`no free sandbox slot (${max} in use)`)
}

/** Give a slot back (its claim file is removed). */
export async function releaseSlot(slot: number, dir: string = slotDir()): Promise<void> {
  taken.delete(slot)
  const legacy = path.join(dir, `${slot}.pid`)
  if ((await readFile(legacy, 'utf8').catch(() => '')).trim() === String(process.pid)) {
    await rm(legacy, { force: true })
  }
  await rm(path.join(dir, `${slot}.${process.pid}`), { force: true })
}

/** The registry folder, writable by every user of the machine (sticky, as /tmp itself). */
async function openRegistry(dir: string): Promise<void> {
  const made = await mkdir(dir, { recursive: true })
  if (made !== undefined) await chmod(dir, 0o1777).catch(() => undefined)
}

async function claimOnDisk(dir: string, slot: number): Promise<boolean> {
  const mine = `${slot}.${process.pid}`
  await writeFile(path.join(dir, mine), '')
  const pattern = new RegExp(`^${slot}\\.(\\d+)$`)
  let free = true
  for (const name of await readdir(dir)) {
    const pid = Number(pattern.exec(name)?.[1] ?? 0)
    if (name === mine || pid === 0) continue
    if (pidAlive(pid)) free = false
    else await rm(path.join(dir, name), { force: true }) // left by a process that died
  }
  if (free) free = await claimLegacy(dir, slot)
  if (!free) await rm(path.join(dir, mine), { force: true })
  return free
}

/**
 * Earlier versions claim a slot with `<slot>.pid` holding the claimant's pid: honour a live one, and
 * write ours there too so a running earlier version leaves the slot alone.
 */
async function claimLegacy(dir: string, slot: number): Promise<boolean> {
  const file = path.join(dir, `${slot}.pid`)
  const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim())
  if (holder && holder !== process.pid && pidAlive(holder)) return false
  await writeFile(file, String(process.pid))
  return true
}
