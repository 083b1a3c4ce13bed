import path from 'node:path'

/**
 * Whether a verifier that exited with a "tests failed" code in fact died of an uncaught exception in
 * its own code (pure). An interpreter that dies of an exception exits 1 — the code most test runners
 * give for failed tests — so the code alone cannot tell a grader that crashed (a decode error on the
 * agent's bytes, a missing key in its config) from tests that failed. The evidence is the end of its
 * error output:
 * - **Python**: the last `Traceback (most recent call last):` block runs to the end of the output
 *   (frames, then the exception line; a test runner's summary after it — unittest's `Ran N tests`,
 *   `FAILED`, a rule of dashes — means the runner caught it and reported a failure);
 * - **Node.js**: the output ends with `Node.js vN`, after the exception line and its `at` frames.
 * It is a crash only when the exception is not an assertion (`AssertionError`: how simple tests say
 * "failed") and no frame lies in the workspace (an exception raised through the agent's code is the
 * agent's failure). Returns the exception in one line (`UnicodeDecodeError: 'utf-8' codec can't …`),
 * or null when the output shows no such crash.
 */
export function uncaughtException(errorOutput: string, workspace: string | null): string | null {
  const lines = errorOutput.replace(/\r\n?/g, '\n').split('\n')
  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop()
  if (lines.length === 0) return null
  const found = lines.at(-1)!.startsWith('Node.js v') ? nodeCrash(lines) : pythonCrash(lines)
  if (!found) return null
  if (/^(\w+\.)*AssertionError\b/.test(found.exception)) return null
  if (workspace !== null && found.files.some((f) => inside(f, workspace))) return null
  return found.exception.length > 300 ? `${found.exception.slice(0, 300)}…` : found.exception
}

interface Found {
  exception: string
  files: string[]
}

const RUNNER_SUMMARY = /^(-{10,}|={10,}|Ran \d+ tests?\b|FAILED\b|OK\b|\d+ (failed|passed|error))/

function pythonCrash(lines: string[]): Found | null {
  let start = -1
  for (let i = lines.length - 1; i >= 0; i--) {
    if (/^Traceback \(most recent call last\):\s*$/.test(lines[i]!)) {
      start = i
      break
    }
  }
  if (start < 0) return null
  const files: string[] = []
  let i = start + 1
  for (; i < lines.length && /^\s/.test(lines[i]!); i++) {
    const m = /^\s+File "([^"]+)", line \d+/.exec(lines[i]!)
    if (m) files.push(m[1]!)
  }
  const exception = lines[i]
  if (exception === undefined || !/^[A-Za-z_][\w.]*(:|$)/.test(exception)) return null
  // A runner's summary after the traceback: it caught the exception and reported a failed test.
  if (lines.slice(i + 1).some((l) => RUNNER_SUMMARY.test(l.trim()))) return null
  return { exception: exception.trim(), files }
}

function nodeCrash(lines: string[]): Found | null {
  // Back from "Node.js vN" over blank lines and an error's own properties ("{ code: … }") to its frames.
  let j = lines.length - 2
  for (let k = 0; j >= 0 && k < 40 && !/^\s+at /.test(lines[j]!); k++) j--
  const last = j
  while (j >= 0 && /^\s+at /.test(lines[j]!)) j--
  if (j < 0 || j === last) return null
  const exception = lines[j]!
  if (!/^[A-Za-z_$][\w$.]*( \[[A-Z_]+\])?(:|$)/.test(exception)) return null
  const files: string[] = []
  for (const l of lines.slice(j + 1, last + 1)) {
    const m =
      /\(((?:file:\/\/)?\/[^()]*?):\d+:\d+\)[\s{]*$/.exec(l) ??
      /^\s+at ((?:file:\/\/)?\/\S*?):\d+:\d+[\s{]*$/.exec(l)
    if (m) files.push(m[1]!.replace(/^file:\/\//, ''))
  }
  return { exception: exception.trim(), files }
}

function inside(file: string, workspace: string): boolean {
  // "<string>", "<stdin>", "<frozen codecs>": code with no file, never the workspace's.
  if (file.startsWith('<')) return false
  // A relative path is relative to the verifier's working directory: the workspace.
  const abs = path.resolve(workspace, file)
  const rel = path.relative(path.resolve(workspace), abs)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))
}
