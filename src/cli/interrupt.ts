import { EXIT } from '../errors.js'
import { killAllRunning } from '../run/process.js'

/**
 * Ctrl-C and SIGTERM for a long command. The first signal prints `message` once and aborts
 * `controller` with the reason `received <SIGNAL>` (attempts in flight are killed and recorded as
 * stopped, leg.json is written, the command exits 130). A second signal does not wait: every process
 * tree still running is SIGKILLed synchronously and the process exits 130 at once. Returns the
 * function that removes the handlers.
 */
export function handleInterrupts(controller: AbortController, message: string): () => void {
  const onSignal = (sig: NodeJS.Signals): void => {
    if (!controller.signal.aborted) {
      process.stderr.write(`\n${message}\n`)
      controller.abort(`received ${sig}`)
      return
    }
    const n = killAllRunning()
    process.stderr.write(`second ${sig}: killed ${n} process tree(s), exiting now\n`)
    process.exit(EXIT.interrupted)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return () => {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
