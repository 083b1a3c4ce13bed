import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** instruction.md of the conformance task: read a file, edit it, run the tests. */
export const SUM_INSTRUCTION = `# Fix the sum

\`sum.sh\` should print the sum of its two arguments, but \`sh sum.sh 2 3\` prints -1.
Fix \`sum.sh\` so it prints 5. Run \`sh test.sh\` to check your work.
`

/**
 * A one-task Harbor-layout panel for the scripted model: `fix-sum` has a file to read (sum.sh), a
 * reference solution that edits it, and a test command. Returns { panelDir, taskDir }.
 */
export function writeConformancePanel(): { panelDir: string; taskDir: string } {
  const panelDir = mkdtempSync(path.join(os.tmpdir(), 'hw-conf-panel-'))
  const taskDir = path.join(panelDir, 'fix-sum')
  const files: Record<string, string> = {
    'instruction.md': SUM_INSTRUCTION,
    'task.toml': 'version = "1.0"\n[hw]\ntest_command = "sh test.sh"\n',
    'environment/sum.sh': '#!/bin/sh\necho $(( $1 - $2 ))\n',
    // test.sh leaves a marker: proof that the harness ran the test command itself.
    'environment/test.sh':
      '#!/bin/sh\ntouch .hw-tested\nout=$(sh sum.sh 2 3)\n[ "$out" = 5 ] && echo PASS || { echo "FAIL: got $out"; exit 1; }\n',
    'solution/solve.sh': "#!/bin/sh\nsed -i 's/\\$1 - \\$2/$1 + $2/' sum.sh\n",
    'tests/test.sh': '#!/bin/sh\nsh test.sh\n',
  }
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(taskDir, rel)), { recursive: true })
    writeFileSync(path.join(taskDir, rel), text)
  }
  return { panelDir, taskDir }
}

/** A fresh git workspace with the task's environment/ committed once (as the run stage makes it). */
export function makeWorkspace(taskDir: string, parent: string): string {
  const ws = path.join(parent, 'work')
  mkdirSync(ws, { recursive: true })
  cpSync(path.join(taskDir, 'environment'), ws, { recursive: true })
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, stdio: 'pipe' })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('-c', 'user.name=hw', '-c', 'user.email=hw@example.invalid', 'commit', '-q', '-m', 'task')
  return ws
}
