import { afterEach, beforeEach, vi } from 'vitest'

/** What the code under test wrote to stdout and stderr during the current test. */
export interface CapturedOutput {
  out: string
  err: string
}

/**
 * Capture `process.stdout.write` / `process.stderr.write` for every test of the enclosing file or
 * `describe`, so CLI commands can be asserted on their printed lines. Before each test the text is
 * emptied; after it the streams are restored and `process.exitCode` is cleared (a command that sets it
 * must not fail the test run). The returned object is refilled in place: read `io.out` / `io.err`, and
 * assign `io.out = ''` to start over within a test.
 */
export function captureOutput(): CapturedOutput {
  const io: CapturedOutput = { out: '', err: '' }
  beforeEach(() => {
    io.out = ''
    io.err = ''
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      io.out += String(s)
      return true
    })
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
      io.err += String(s)
      return true
    })
  })
  afterEach(() => {
    vi.restoreAllMocks()
    process.exitCode = undefined
  })
  return io
}
