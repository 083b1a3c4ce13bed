/**
 * Whether a process with this id exists on this machine: signal 0 reaches it, or it exists but
 * belongs to another user (EPERM).
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}
