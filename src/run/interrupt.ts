import { killAllRunning } from '../process/exec.js'
import { EXIT } from '../util/errors.js'

/**
 * Ctrl-C and SIGTERM for a long command — the one handler behind both front doors: the `run` and
 * `local` CLI commands and the action's `run` command (whose cancelled GitHub job gets SIGINT, then
 * SIGTERM 7.5 s later). The first signal writes `message` once through `write` (default: stderr)
 * and aborts `controller` with the reason `received <SIGNAL>`: attempts in flight are killed and
 * recorded as stopped and leg.json is written. A second signal does not wait: every process tree
 * still running is SIGKILLed synchronously and the process exits 130 (`EXIT.interrupted`) at once.
 * Returns the function that removes the handlers.
 */
export function handleInterrupts(
  controller: AbortController,
  message: string,
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): () => void {
  const onSignal = (sig: NodeJS.Signals): void => {
    if (!controller.signal.aborted) {
      write(`\n${message}`)
      controller.abort(`received ${sig}`)
      return
    }
    const n = killAllRunning()
    write(`second ${sig}: killed ${n} process tree(s), exiting now`)
    process.exit(EXIT.interrupted)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return () => {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
