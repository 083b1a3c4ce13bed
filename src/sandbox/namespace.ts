import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { killGroup, runHarnessProcess } from '../process/exec.js'
import type { ExecCommand, ExecLimits, Sandbox, SandboxBackend, SandboxSpec } from './contract.js'
import { type HostForwards, openHostForwards } from './forward/host.js'
import { LOOPBACK_FORWARDER_JS } from './forward/loopback.js'
import { NAMESPACE_SCRIPT } from './namespace-script.js'
import { PRIV_ENV, type Privilege, runAsRoot, runAsRootSync } from './privileged.js'
import { claimSlot, releaseSlot } from './slots.js'

/** Tools recipe (a) needs (util-linux, coreutils, procps, passwd). */
const TOOLS = [
  'unshare',
  'setpriv',
  'timeout',
  'useradd',
  'pkill',
  'chown',
  'mount',
  'pivot_root',
  'awk',
  'ipcrm',
  'ip',
]

/** An empty folder on the host where a namespace builds its new root (a private tmpfs, gone with it). */
const STASH = '/run/harness-watch-stash'

/** Exit codes of `timeout`: 124 = stopped with SIGTERM at the limit, 137 = SIGKILL after the grace. */
const TIMEOUT_CODES = [124, 137] as const

type Priv = Exclude<Privilege, null>

/** The slot's sandbox user. */
interface SlotUser {
  slot: number
  name: string
  uid: number
  gid: number
}

/** Users already looked up or made by this process, by slot. */
const users = new Map<number, SlotUser>()

/** `hw-s<N>`, created once as a system user with no home, no login shell and only its own group. */
async function slotUser(p: Priv, slot: number): Promise<SlotUser> {
  const known = users.get(slot)
  if (known) return known
  const user = await findOrMakeUser(p, slot)
  users.set(slot, user)
  return user
}

async function findOrMakeUser(p: Priv, slot: number): Promise<SlotUser> {
  const name = `hw-s${slot}`
  const ids = async (): Promise<SlotUser | null> => {
    try {
      const uid = Number((await runAsRoot(p, ['id', '-u', name])).trim())
      const gid = Number((await runAsRoot(p, ['id', '-g', name])).trim())
      return { slot, name, uid, gid }
    } catch {
      return null
    }
  }
  const found = await ids()
  if (found) return found
  try {
    await runAsRoot(p, [
      'useradd',
      '--system',
      '--no-create-home',
      '--user-group',
      '--shell',
      '/usr/sbin/nologin',
      name,
    ])
  } catch (e) {
    const again = await ids() // another process may have created it meanwhile
    if (again) return again
    throw e
  }
  const made = await ids()
  if (!made) throw new Error(`useradd ${name} succeeded but the user is not found`)
  return made
}

/**
 * What a sandbox may read of the host besides the folders an attempt exposes (its workspace and home,
 * the harness install, Node, declared read_only paths): an allowlist, not a list of places known to
 * hold secrets. Everything else (/opt, /srv, /mnt, /home, /root, /var, /run, a self-hosted runner's
 * work folder, a checkout, the rest of /etc) does not exist inside.
 * - System folders, read-only (a top-level symbolic link such as /bin → usr/bin is kept as a link).
 */
const SYSTEM_FOLDERS = ['usr', 'bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32']
/** Configuration folders under /usr (covered by an empty folder unless a job names host configuration). */
const USR_CONFIG_FOLDERS = ['/usr/local/etc', '/usr/etc']

/**
 * - The files and folders of /etc a program needs: name resolution, users and groups (no shadow),
 *   certificates, alternatives, the dynamic linker's configuration, time zone, locale and terminal
 *   settings, the OS's identity and Python's site configuration. Never git's or a package manager's
 *   system configuration (they may hold credentials), never keys.
 */
const ETC_ALLOWED = [
  'hosts',
  'host.conf',
  'resolv.conf',
  'nsswitch.conf',
  'gai.conf',
  'services',
  'protocols',
  'networks',
  'hostname',
  'passwd',
  'group',
  'ssl/certs',
  'ssl/openssl.cnf',
  'ca-certificates',
  'ca-certificates.conf',
  'pki/tls/certs',
  'pki/ca-trust/extracted',
  'alternatives',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'timezone',
  'locale.alias',
  'os-release',
  'lsb-release',
  'debian_version',
  'mime.types',
  'magic',
  'magic.mime',
  'inputrc',
  'shells',
  'terminfo',
]

/**
 * The /etc allowlist as it is on this host: the fixed names plus Python's own folders (python3,
 * python3.11…) and `extra` (a job's SandboxSpec.hostConfig; a name with `..` or odd characters is
 * left out), split into files (a symbolic link by what it points to; a dangling one is left out) and
 * folders.
 */
export function etcAllowlist(
  extra: readonly string[] = [],
  etc = '/etc',
): { files: string[]; dirs: string[] } {
  const python = readdirSync(etc)
    .filter((n) => /^python3(\.\d+)?$/.test(n))
    .sort()
  const files: string[] = []
  const dirs: string[] = []
  for (const name of new Set([...ETC_ALLOWED, ...python, ...extra])) {
    if (!/^[\w.+-]+(\/[\w.+-]+)*$/.test(name) || name.split('/').includes('..')) continue
    const st = statSync(path.join(etc, name), { throwIfNoEntry: false })
    if (st?.isDirectory()) dirs.push(name)
    else if (st?.isFile()) files.push(name)
  }
  return { files, dirs }
}

function checkPath(p: string): string {
  if (!path.isAbsolute(p) || /[\n\0]/.test(p)) {
    throw new Error(`a sandbox path must be absolute and on one line: ${JSON.stringify(p)}`)
  }
  return path.resolve(p)
}

/**
 * Recipe (a) of design/sandbox.md: `unshare --pid --fork --kill-child --mount-proc` (run as root, or
 * through `sudo -n`), a new root built from an allowlist (read-only system folders, a minimal /etc,
 * its own /proc, a minimal /dev, empty private /tmp and /var/tmp; see namespace-script.ts), the
 * attempt's folders bound writable and the tools read-only, and the harness started as the
 * slot's own system user `hw-s<N>` (setpriv: no capabilities, no new privileges) under `timeout -k`.
 * The harness sees only its namespace's processes; the action's environment and files, the runner's
 * files and other attempts are out of its reach. Needs Linux, util-linux, and root or passwordless sudo.
 */
export function namespaceBackend(priv: () => Promise<Privilege>): SandboxBackend {
  return {
    kind: 'namespace+uid',
    capabilities: { hidesProcesses: true, separateUser: true, hidesFiles: true, readOnlySystem: true },
    async probe() {
      if (process.platform !== 'linux') return { ok: false, reason: 'needs Linux namespaces' }
      const p = await priv()
      if (!p) return { ok: false, reason: 'needs root or passwordless sudo (sudo -n)' }
      for (const tool of TOOLS) {
        try {
          await runAsRoot(p, ['sh', '-c', `command -v ${tool}`], 10_000)
        } catch {
          return { ok: false, reason: `${tool} is not installed` }
        }
      }
      try {
        // A throw-away namespace proves the kernel allows it (the tmpfs lives and dies in it).
        await runAsRoot(
          p,
          [
            'unshare',
            '--pid',
            '--ipc',
            '--net',
            '--fork',
            '--mount-proc',
            '--propagation',
            'private',
            '--',
          ].concat([
            'sh',
            '-c',
            // …and that a new root can be entered (pivot_root refuses an initramfs root).
            'test "$$" = 1 && mount -t tmpfs hw-probe /tmp && ip link set lo up && mkdir /tmp/r && ' +
              'mount -t tmpfs hw-probe /tmp/r && cd /tmp/r && pivot_root . .',
          ]),
          15_000,
        )
      } catch (e) {
        return { ok: false, reason: `the kernel refused a PID+mount namespace: ${(e as Error).message}` }
      }
      return { ok: true, reason: null }
    },
    async open(spec: SandboxSpec): Promise<Sandbox> {
      const p = await priv()
      if (!p) throw new Error('the namespace sandbox needs root or passwordless sudo')
      const writable = spec.writable.map(checkPath)
      const masked = (spec.masked ?? []).map(checkPath)
      const slot = await claimSlot()
      let user: SlotUser
      let forwards: HostForwards | null = null
      try {
        user = await slotUser(p, slot)
        await sweep(p, user)
        if (writable.length > 0) await runAsRoot(p, ['chown', '-R', `${user.uid}:${user.gid}`, ...writable])
        // Proxy-only network: one host socket per forwarded loopback port, mounted read-only inside.
        if (spec.loopbackPorts && spec.loopbackPorts.length > 0)
          forwards = await openHostForwards(spec.loopbackPorts)
      } catch (e) {
        await releaseSlot(slot)
        throw e
      }
      const expose = [
        ...writable.map((dir) => ({ mode: 'rw', dir })),
        ...[...spec.readOnly, path.dirname(process.execPath), ...(forwards ? [forwards.dir] : [])].map(
          (d) => ({
            mode: 'ro',
            dir: checkPath(d),
          }),
        ),
      ]
        .filter((e, i, all) => all.findIndex((o) => o.dir === e.dir) === i && existsSync(e.dir))
        // Parents before children, so a folder bound inside another stays visible.
        .sort((a, b) => a.dir.length - b.dir.length)
      let closed = false
      const me = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 }
      const u = user
      const fwd = forwards
      // A network of its own whenever ports are named (none named: no way out at all).
      const ownNet = spec.loopbackPorts !== undefined
      const hostConfig = spec.hostConfig ?? []
      // /usr is exposed whole, so the configuration folders inside it (npm's global npmrc and git's
      // system gitconfig of a Node or git installed under /usr/local, which may hold registry tokens)
      // are covered, except for a job that names host configuration (installs).
      const hidden = hostConfig.length > 0 ? masked : [...masked, ...USR_CONFIG_FOLDERS]
      return {
        kind: 'namespace+uid',
        root: writable[0] ?? '/',
        network: ownNet ? 'proxy-only' : 'host',
        exec(cmd: ExecCommand, limits: ExecLimits) {
          return runHarnessProcess(wrap(p, u, expose, hidden, hostConfig, cmd, limits, ownNet, fwd), {
            ...limits,
            // The inner `timeout` stops the harness; this is the backstop if the namespace itself hangs.
            timeoutMs: limits.timeoutMs + limits.graceMs + 5000,
            graceMs: 1000,
            sweepHome: undefined,
            innerTimeout: { codes: TIMEOUT_CODES, ms: limits.timeoutMs },
            kill: (pid, signal) => killNamespace(p, u, pid, signal),
          })
        },
        async close() {
          if (closed) return
          closed = true
          try {
            await sweep(p, u)
            const left = writable.filter((d) => existsSync(d))
            if (left.length > 0) await runAsRoot(p, ['chown', '-R', `${me.uid}:${me.gid}`, ...left])
          } finally {
            await fwd?.close()
            await releaseSlot(slot)
          }
        },
      }
    },
  }
}

/** The root command line that starts `cmd` in a fresh namespace as the slot's user. */
function wrap(
  p: Priv,
  user: SlotUser,
  expose: { mode: string; dir: string }[],
  masked: string[],
  hostConfig: readonly string[],
  cmd: ExecCommand,
  limits: ExecLimits,
  ownNet: boolean,
  forwards: HostForwards | null,
): ExecCommand {
  const network: Record<string, string> = forwards
    ? {
        HW_SB_FORWARD: forwards.dir,
        HW_SB_PORTS: forwards.forwards.map((f) => String(f.port)).join(' '),
        HW_SB_NODE: process.execPath,
        HW_SB_FORWARD_JS: LOOPBACK_FORWARDER_JS,
      }
    : {}
  const etc = etcAllowlist(hostConfig)
  const vars: Record<string, string> = {
    ...network,
    ...(ownNet ? { HW_SB_NET: '1' } : {}),
    ...PRIV_ENV,
    HW_SB_STASH: STASH,
    HW_SB_EXPOSE: expose.map((e) => `${e.mode}:${e.dir}`).join('\n'),
    HW_SB_SYSTEM: SYSTEM_FOLDERS.join(' '),
    HW_SB_ETC_FILES: etc.files.join(' '),
    HW_SB_ETC_DIRS: etc.dirs.join(' '),
    HW_SB_MASK: masked.join('\n'),
    HW_SB_UID: String(user.uid),
    HW_SB_GID: String(user.gid),
    HW_SB_CWD: checkPath(cmd.cwd),
    HW_SB_TIMEOUT: `${Math.max(1, Math.ceil(limits.timeoutMs / 1000))}s`,
    HW_SB_GRACE: `${Math.max(1, Math.ceil(limits.graceMs / 1000))}s`,
  }
  const argv = [
    'env',
    '-i',
    ...Object.entries(vars).map(([k, v]) => `${k}=${v}`),
    'unshare',
    '--pid',
    // A private System V IPC namespace: queues, segments and semaphores die with the attempt.
    '--ipc',
    // Proxy-only: a network namespace of its own, whose only way out is the loopback forwarder.
    ...(ownNet ? ['--net'] : []),
    '--fork',
    '--kill-child=SIGKILL',
    '--mount-proc',
    '--propagation',
    'private',
    '--',
    'sh',
    '-c',
    NAMESPACE_SCRIPT,
    'hw-sandbox',
    ...Object.entries(cmd.env).map(([k, v]) => `${k}=${v}`),
    cmd.command,
    ...cmd.args,
  ]
  const [file, ...args] = p === 'root' ? argv : ['sudo', '-n', ...argv]
  return { command: file as string, args, cwd: '/', env: { ...PRIV_ENV }, stdin: cmd.stdin }
}

/**
 * Stop a namespace. As root: signal the process group (SIGKILL reaches the namespace's PID 1, and the
 * kernel then kills everything in it). Through sudo the action's user may not signal root's
 * processes: `sudo -n pkill -u <slot user>` ends the harness (the root shell then exits) and
 * `sudo -n kill` the group. Synchronous (also used from a signal handler). Never throws.
 */
function killNamespace(p: Priv, user: SlotUser, pid: number, signal: NodeJS.Signals): void {
  if (p === 'root') {
    killGroup(pid, signal)
    if (signal === 'SIGKILL') runAsRootSync(p, ['pkill', '-KILL', '-u', user.name])
    return
  }
  runAsRootSync(p, ['pkill', signal === 'SIGKILL' ? '-KILL' : '-TERM', '-u', user.name])
  if (signal === 'SIGKILL') runAsRootSync(p, ['kill', '-KILL', '--', `-${pid}`])
}

/**
 * Kill every process of the slot's user (leftovers of an earlier, crashed run included) and remove
 * the System V IPC objects it owns or created on the host (an attempt's own live in its private IPC
 * namespace and die with it; these are left by runs of versions without one), so nothing passes from
 * one attempt to the next.
 */
async function sweep(p: Priv, user: SlotUser): Promise<void> {
  await runAsRoot(p, ['pkill', '-KILL', '-u', user.name]).catch(() => {}) // exit 1: nothing to kill
  await runAsRoot(p, ['sh', '-c', IPC_SWEEP, 'hw-ipc-sweep', String(user.uid)])
}

/**
 * Remove every message queue, shared-memory segment and semaphore set whose owner or creator is uid
 * $1, read from /proc/sysvipc (columns found by name in its header line).
 */
const IPC_SWEEP = `u=$1
for f in msg shm sem; do
  [ -r /proc/sysvipc/$f ] || continue
  awk -v u="$u" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "uid") a = i; if ($i == "cuid") c = i; if ($i ~ /^(msqid|shmid|semid)$/) d = i }; next }
    a && d && ($a == u || $c == u) { print $d }' /proc/sysvipc/$f |
  while read -r id; do
    case $f in msg) ipcrm -q "$id" ;; shm) ipcrm -m "$id" ;; sem) ipcrm -s "$id" ;; esac
  done
done`
