import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { pidAlive } from '../../util/pid.js'

/** One host-side listener: connections to `socket` are piped to 127.0.0.1:`port`. */
export interface HostForward {
  port: number
  /** Absolute path of the unix socket file. */
  socket: string
}

/** The listeners of one sandbox; `close` ends every connection and removes the socket folder. */
export interface HostForwards {
  /** The folder holding the socket files (mount it read-only into the sandbox). */
  dir: string
  forwards: HostForward[]
  /** Connections accepted so far, by port (for tests and the attempt's notes). */
  accepted: Map<number, number>
  close(): Promise<void>
}

/** Socket folders are named `hwf-<pid of the run>-<random>`, so a later run can tell a crashed run's. */
export const FORWARD_PREFIX = 'hwf-'

/**
 * Remove the socket folders a crashed run left under `parent` (its process on this host is gone; a
 * live run's are left alone). Returns the folders removed. Never throws.
 */
export async function removeStaleForwardDirs(
  parent = os.tmpdir(),
  alive: (pid: number) => boolean = pidAlive,
): Promise<string[]> {
  const names = await readdir(parent).catch(() => [] as string[])
  const gone: string[] = []
  for (const n of names) {
    const m = /^hwf-(\d+)-[A-Za-z0-9]+$/.exec(n)
    if (!m || alive(Number(m[1]))) continue
    const dir = path.join(parent, n)
    await rm(dir, { recursive: true, force: true }).catch(() => undefined)
    gone.push(dir)
  }
  return gone.sort()
}

/**
 * Socket file name for a forwarded port, the same on both sides (`<port>.sock`).
 */
export function socketName(port: number): string {
  return `${port}.sock`
}

/**
 * Open one unix socket per loopback port in a fresh folder (short, under the system temp folder: a
 * socket path must stay under 108 bytes), each piping every connection to 127.0.0.1:<port> on the
 * host. This is the only way out of a sandbox with no network of its own (a container started with
 * `--network none`, or a fresh network namespace): mount the folder into it and run the loopback
 * forwarder (loopback.ts) there. Socket files are mode 0666 so an id-mapped sandbox user may connect;
 * the folder is 0755. Only 127.0.0.1 targets: nothing else on the host or outside is reachable.
 */
export async function openHostForwards(
  ports: readonly number[],
  parent = os.tmpdir(),
): Promise<HostForwards> {
  const dir = await mkdtemp(path.join(parent, `${FORWARD_PREFIX}${process.pid}-`))
  await chmod(dir, 0o755)
  const servers: net.Server[] = []
  const open = new Set<net.Socket>()
  const accepted = new Map<number, number>()
  const forwards: HostForward[] = []
  try {
    for (const port of [...new Set(ports)]) {
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`not a TCP port: ${port}`)
      const socket = path.join(dir, socketName(port))
      const server = net.createServer((inbound) => {
        accepted.set(port, (accepted.get(port) ?? 0) + 1)
        const outbound = net.connect({ host: '127.0.0.1', port })
        track(open, inbound)
        track(open, outbound)
        pipeBoth(inbound, outbound)
      })
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(socket, () => {
          server.off('error', reject)
          resolve()
        })
      })
      servers.push(server)
      await chmod(socket, 0o666)
      forwards.push({ port, socket })
    }
  } catch (e) {
    await closeAll(servers, open, dir)
    throw e
  }
  let closing: Promise<void> | null = null
  return {
    dir,
    forwards,
    accepted,
    close: () => {
      closing ??= closeAll(servers, open, dir)
      return closing
    },
  }
}

function track(set: Set<net.Socket>, s: net.Socket): void {
  set.add(s)
  s.once('close', () => set.delete(s))
}

/** Pipe both ways; an error or end on either side ends the other (no half-open leftovers). */
export function pipeBoth(a: net.Socket, b: net.Socket): void {
  a.pipe(b)
  b.pipe(a)
  const end = () => {
    a.destroy()
    b.destroy()
  }
  a.once('error', end)
  b.once('error', end)
  a.once('close', end)
  b.once('close', end)
}

async function closeAll(servers: net.Server[], open: Set<net.Socket>, dir: string): Promise<void> {
  for (const s of open) s.destroy()
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))))
  await rm(dir, { recursive: true, force: true })
}
