import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { stringify } from 'yaml'
import { type LoadedManifest, loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import type { Plan } from '../../src/plan/schema.js'
import {
  type AttemptRecord,
  AttemptRecordSchema,
  type LegRecord,
  LegRecordSchema,
} from '../../src/records/attempt.js'
import { type LedgerRow, LedgerRowSchema } from '../../src/records/ledger.js'

/**
 * A small panel of real task folders (each with a real tests/test.sh) and harness scripts, written
 * into a fresh temp folder:
 * - js-add: node module with a bug; test.sh exits by the verdict.
 * - txt-greet: a text file; test.sh writes a reward to $HW_REWARD_FILE.
 * - sh+count: a shell script; an id with `+` (sanitised path segment).
 * Each instruction names its fix as `FIX:<id>`; `fixes/<id>/` holds the files that solve it.
 */
export interface Fixture {
  root: string
  panel: string
  fixes: string
  scripts: string
  /** Root of attempt workspaces for this fixture (inside root, short). */
  work: string
  ids: string[]
}

const TOML = `version = "1.0"
[metadata]
difficulty = "easy"
language = "javascript"
category = "bugfix"
[verifier]
timeout_sec = 30
`

export function makeFixture(): Fixture {
  const root = mkdtempSync(path.join(tmpdir(), 'hw-run-'))
  const panel = path.join(root, 'panel')
  const fixes = path.join(root, 'fixes')
  const scripts = path.join(root, 'scripts')
  const tasks: Record<string, { env: Record<string, string>; test: string; fix: Record<string, string> }> = {
    'js-add': {
      env: {
        'add.js': 'module.exports = (a, b) => a - b\n',
        'package.json': '{"name":"add","private":true}\n',
      },
      test: `#!/usr/bin/env bash\nset -u\nnode -e "const add = require(process.cwd() + '/add.js'); process.exit(add(2, 3) === 5 ? 0 : 1)"\n`,
      fix: { 'add.js': 'module.exports = (a, b) => a + b\n' },
    },
    'txt-greet': {
      env: { 'greet.txt': 'hello\n', '.gitignore': 'build/\n' },
      test: `#!/usr/bin/env bash\nif grep -qx 'hello world' greet.txt; then echo 1 > "$HW_REWARD_FILE"; else echo 0 > "$HW_REWARD_FILE"; fi\nexit 0\n`,
      fix: { 'greet.txt': 'hello world\n', 'build/out.txt': 'ignored but part of the deliverable\n' },
    },
    'sh+count': {
      env: { 'count.sh': '#!/bin/sh\necho 2\n' },
      test: `#!/usr/bin/env bash\n[ "$(sh count.sh)" = 3 ]\n`,
      fix: { 'count.sh': '#!/bin/sh\necho 3\n', 'NOTES.md': 'new file\n' },
    },
  }
  for (const [id, t] of Object.entries(tasks)) {
    const dir = path.join(panel, id)
    write(path.join(dir, 'instruction.md'), `Fix the task. FIX:${id}\n`)
    write(path.join(dir, 'task.toml'), TOML)
    for (const [f, text] of Object.entries(t.env)) write(path.join(dir, 'environment', f), text)
    write(path.join(dir, 'tests', 'test.sh'), t.test)
    for (const [f, text] of Object.entries(t.fix)) write(path.join(fixes, id, f), text)
    write(
      path.join(dir, 'solution', 'solve.sh'),
      `#!/usr/bin/env bash\ncp -R "${path.join(fixes, id)}/." .\n`,
    )
  }
  const fixOf = `id=$(grep -o 'FIX:[^ ]*' "$HW_PROMPT_FILE" | head -1 | cut -d: -f2)`
  const sh = (name: string, body: string): void => {
    write(path.join(scripts, name), `#!/usr/bin/env bash\n${body}\n`)
    chmodSync(path.join(scripts, name), 0o755)
  }
  sh(
    'solve.sh',
    `${fixOf}\ncp -R "${fixes}/$id/." .\necho '{"type":"done","text":"fixed"}'\necho "solved $id"`,
  )
  sh('noop.sh', 'echo nothing to do')
  // Applies the fix, then hangs ignoring SIGTERM, with grandchildren: one in the group, one that left it.
  sh(
    'hang.sh',
    `${fixOf}\ncp -R "${fixes}/$id/." .\ntrap '' TERM\nsleep "$HW_MARK" &\nsetsid sleep "$HW_MARK" &\nsleep "$HW_MARK"\nwait`,
  )
  // Sends $HW_REQUESTS chat requests through the attempt's endpoint (failures ignored), then applies
  // the fix when HW_THEN=fix, and exits with $HW_EXIT.
  write(
    path.join(scripts, 'chat.mjs'),
    `import { readFileSync, cpSync } from 'node:fs'
const n = Number(process.env.HW_REQUESTS ?? 1)
let ok = 0
for (let i = 0; i < n; i++) {
  const r = await fetch(process.env.HW_OPENAI_BASE_URL + '/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.HW_API_KEY },
    body: JSON.stringify({ model: process.env.HW_MODEL, messages: [{ role: 'user', content: 'step ' + i }] }),
  }).catch(() => null)
  if (r) { await r.text(); if (r.ok) ok++ }
}
if (process.env.HW_THEN === 'fix') {
  const id = /FIX:(\\S+)/.exec(readFileSync(process.env.HW_PROMPT_FILE, 'utf8'))[1]
  cpSync(process.env.FIXES + '/' + id, '.', { recursive: true })
}
console.log(JSON.stringify({ type: 'result', ok }))
process.exit(Number(process.env.HW_EXIT ?? 0))
`,
  )
  sh('envdump.sh', 'env -0 > "$HW_DUMP"\nls -A "$HOME" > "$HW_DUMP.home"\necho dumped')
  return { root, panel, fixes, scripts, work: path.join(root, 'wk'), ids: Object.keys(tasks).sort() }
}

/**
 * The fixture for every test of the calling file: made before the first test, removed after the last.
 * The returned object is filled in place when it is made, so read its fields inside hooks and tests.
 */
export function useRunFixture(): Fixture {
  const fx = {} as Fixture
  beforeAll(() => {
    Object.assign(fx, makeFixture())
  })
  afterAll(() => {
    if (fx.root) removeFixture(fx)
  })
  return fx
}

/** Remove a fixture's temp folder. */
export function removeFixture(fx: Fixture | undefined): void {
  if (fx) rmSync(fx.root, { recursive: true, force: true })
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, text)
  if (file.endsWith('.sh')) chmodSync(file, 0o755)
}

/** A command-harness cell running one of the fixture's scripts. */
export function scriptCell(
  fx: Fixture,
  id: string,
  script: string,
  config: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    harness: 'command',
    version: '1.0.0',
    config: { command: `bash ${fx.scripts}/${script}`, ...config },
  }
}

/** Write a manifest over the fixture panel and return it loaded, with its plan. */
export async function manifestAndPlan(
  fx: Fixture,
  cells: Record<string, unknown>[],
  over: Record<string, unknown> = {},
  name = 'manifest.yml',
): Promise<{ file: string; loaded: LoadedManifest; plan: Plan }> {
  const manifest = {
    schema_version: 1,
    experiment: { id: 'run-fixture' },
    model: { id: 'test-model', provider: 'scripted', api: 'chat', prices: { input: 1, output: 2 } },
    benchmark: { family: 'fixture', revision: 'r1', verifier: { kind: 'task-tests', timeout_s: 30 } },
    panel: { source: 'tasks', path: './panel' },
    cells,
    baseline: cells[0]?.id,
    budgets: { timeout_s: 20 },
    trials: 1,
    retries: { max: 1, on: ['infra'], backoff_s: 0 },
    // The fixture's scripts live in a temp folder an isolating sandbox hides; sandbox.test.ts and
    // the probe tests run the isolating backends.
    sandbox: { backend: 'env-only', allow_unisolated: true },
    ...over,
  }
  const file = path.join(fx.root, name)
  writeFileSync(file, stringify(manifest))
  const loaded = await loadManifest(file)
  const panel = await resolvePanel(loaded.manifest, loaded.dir, file)
  return { file, loaded, plan: buildPlan(loaded, panel) }
}

/** attempts.jsonl, each line validated against its schema. */
export function readAttempts(out: string): AttemptRecord[] {
  const text = readFileSync(path.join(out, 'attempts.jsonl'), 'utf8')
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => AttemptRecordSchema.parse(JSON.parse(l)))
}

/** ledger.jsonl, each line validated against its schema. */
export function readLedger(out: string): LedgerRow[] {
  return readFileSync(path.join(out, 'ledger.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => LedgerRowSchema.parse(JSON.parse(l)))
}

/** leg.json, validated against its schema. */
export function readLegJson(out: string): LegRecord {
  return LegRecordSchema.parse(JSON.parse(readFileSync(path.join(out, 'leg.json'), 'utf8')))
}

/** Every path under `dir` (relative), files and folders. */
export function walk(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String)
}

/** Pids whose command line contains `needle` (Linux /proc). */
export function pidsWithCmdline(needle: string): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ')
      if (cmd.includes(needle)) out.push(Number(name))
    } catch {
      // exited meanwhile
    }
  }
  return out
}
