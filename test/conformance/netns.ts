import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'

/**
 * Whether this machine lets us make a loopback-only network namespace with a private mount namespace
 * (`unshare --net --mount`, root or user namespaces), and why not when it does not.
 */
export function netnsSupport(): { ok: true } | { ok: false; reason: string } {
  try {
    execFileSync(
      'unshare',
      ['--net', '--mount', '--propagation', 'private', '--', 'ip', 'link', 'set', 'lo', 'up'],
      {
        stdio: 'pipe',
        timeout: 10_000,
      },
    )
    return { ok: true }
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string }
    const why = err.stderr?.toString().trim() || err.message.split('\n')[0]
    return {
      ok: false,
      reason: `cannot create a loopback-only network namespace (unshare --net --mount): ${why}`,
    }
  }
}

/**
 * argv that runs `inner` in a fresh network namespace holding only `lo` (brought up), with
 * /etc/resolv.conf bind-mounted (privately) to a file naming 127.0.0.1, where the DNS sink listens.
 */
export function offlineArgv(inner: string[], scratch: string): string[] {
  const resolv = path.join(scratch, 'resolv.conf')
  writeFileSync(resolv, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n')
  const script = 'set -e; ip link set lo up; mount --bind "$0" /etc/resolv.conf; exec "$@"'
  return [
    'unshare',
    '--net',
    '--mount',
    '--propagation',
    'private',
    '--',
    'bash',
    '-c',
    script,
    resolv,
    ...inner,
  ]
}
