import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** instruction.md of the fixture task `fix-greeting`. */
export const GREETING_INSTRUCTION = `# Fix the greeting

\`greet.sh\` prints "Hello, wrld!". Make it print "Hello, world!".
Run \`sh check.sh\` to check your work.
`

/**
 * Write a small Harbor-layout panel into a fresh temp folder: `fix-greeting` (a shell task with a
 * visible check and a reference solution) and `add-farewell` (a second task, so recognition by
 * instruction text has a choice to make). Returns the panel folder.
 */
export function writePanel(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'hw-model-panel-'))
  const t = path.join(root, 'fix-greeting')
  write(t, 'instruction.md', GREETING_INSTRUCTION)
  write(
    t,
    'task.toml',
    'version = "1.0"\n[metadata]\ndifficulty = "easy"\nlanguage = "javascript"\ncategory = "bugfix"\n[hw]\ntest_command = "sh check.sh"\n',
  )
  write(t, 'environment/greet.sh', '#!/bin/sh\necho "Hello, wrld!"\n')
  write(
    t,
    'environment/check.sh',
    '#!/bin/sh\nout=$(sh greet.sh)\n[ "$out" = "Hello, world!" ] && echo PASS || { echo "FAIL: got $out"; exit 1; }\n',
  )
  // The solution deliberately holds quotes, $ and a line "EOF": the heredoc must pass it verbatim.
  write(
    t,
    'solution/solve.sh',
    '#!/bin/bash\nset -euo pipefail\nsed -i "s/wrld/world/" greet.sh\ncat > NOTES.md <<\'EOF\'\nfixed $HOME typo\nEOF\n',
  )
  write(t, 'tests/test.sh', '#!/bin/sh\nsh check.sh\n')

  const f = path.join(root, 'add-farewell')
  write(
    f,
    'instruction.md',
    'Add a file `bye.txt` containing the single line "bye". Run `test -f bye.txt` to check.\n',
  )
  write(f, 'task.toml', '[hw]\ntest_command = "grep -qx bye bye.txt"\n')
  write(f, 'environment/README.md', '# farewell\n')
  write(f, 'solution/solve.sh', 'echo bye > bye.txt\n')
  write(f, 'tests/test.sh', '#!/bin/sh\ngrep -qx bye bye.txt\n')
  return root
}

/** A fresh git workspace holding the task's environment/ (one commit), like the run stage makes. */
export function makeWorkspace(taskDir: string): string {
  const ws = mkdtempSync(path.join(os.tmpdir(), 'hw-model-ws-'))
  cpSync(path.join(taskDir, 'environment'), ws, { recursive: true })
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, stdio: 'pipe' })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('-c', 'user.name=hw', '-c', 'user.email=hw@example.invalid', 'commit', '-q', '-m', 'init')
  return ws
}

/** Run the task's hidden tests in a workspace; true when they pass. */
export function taskTestsPass(taskDir: string, workspace: string): boolean {
  try {
    execFileSync('sh', [path.join(taskDir, 'tests', 'test.sh')], { cwd: workspace, stdio: 'pipe' })
    return true
  } catch {
    return false
  }
}

function write(dir: string, rel: string, text: string): void {
  const file = path.join(dir, rel)
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, text)
}
