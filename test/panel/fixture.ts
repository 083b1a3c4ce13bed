import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

/** Files of one task folder, relative path → content. Shell scripts are written executable. */
export type TaskFiles = Record<string, string>

export const GOOD_TOML = `version = "1.0"

[metadata]
difficulty = "easy"
language = "python"
category = "bugfix"
tags = ["fixture"]

[verifier]
timeout_sec = 20

[agent]
timeout_sec = 20

[hw]
test_command = "python3 -m unittest -q"
`

/**
 * A small, real task: environment/answer.txt says "wrong"; the verifier passes when it says "right";
 * solve.sh writes "right". `overrides` replace or add files (a value of null deletes one).
 */
export function taskFiles(overrides: Record<string, string | null> = {}): TaskFiles {
  const base: Record<string, string | null> = {
    'instruction.md': 'Make answer.txt say "right". Check with `cat answer.txt`.\n',
    'task.toml': GOOD_TOML,
    'environment/answer.txt': 'wrong\n',
    'tests/test.sh': '#!/usr/bin/env bash\ngrep -qx right answer.txt\n',
    'solution/solve.sh': '#!/usr/bin/env bash\nset -e\necho right > answer.txt\n',
    ...overrides,
  }
  return Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== null))
}

/** Write task folders under a fresh temp panel folder; returns its path. */
export async function writePanel(tasks: Record<string, TaskFiles>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'hw-panel-test-'))
  for (const [id, files] of Object.entries(tasks)) await writeTask(path.join(root, id), files)
  return root
}

export async function writeTask(dir: string, files: TaskFiles): Promise<void> {
  await mkdir(dir, { recursive: true })
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel)
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, text, { mode: rel.endsWith('.sh') ? 0o755 : 0o644 })
  }
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}
