/**
 * Agreement of the `bfcl` grader with BFCL's own checker, on the candidates perturb.py wrote.
 *
 * Usage: npx tsx scripts/bfcl-agreement/grade.ts <imported panel folder> <candidates.jsonl>
 *
 * Each candidate's calls carry their arguments as the JSON text a model sends (perturb.py writes them
 * with Python's json.dumps, so `5.0` stays `5.0`). They go through the bridge's own dispatcher with that
 * text, as the bridge's transports pass it on (its schema validation decides which calls are
 * `invalid_arguments`, as in a real attempt), then the task's graders grade them. A row the
 * import skipped counts apart. Prints agreement per category and overall; not part of the test suite.
 */
import { appendFileSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { TracedCall, TraceLog } from '../../src/bridge/calls.js'
import { Dispatcher } from '../../src/bridge/dispatch.js'
import { gradeAll } from '../../src/grade/registry.js'
import { type BridgeTask, loadBridgeTask } from '../../src/panel/bridge-task.js'
import { loadTask } from '../../src/panel/task.js'

const [dir, file] = process.argv.slice(2)
if (!dir || !file) {
  process.stderr.write('usage: grade.ts <imported panel folder> <candidates.jsonl>\n')
  process.exit(2)
}

interface Candidate {
  id: string
  category: string
  kind: string
  calls: { name: string; arguments: string }[]
  bfcl: boolean
}

const tasks = new Map<string, BridgeTask | null>()
async function task(id: string): Promise<BridgeTask | null> {
  if (!tasks.has(id)) {
    const t = await loadTask(path.join(dir as string, id)).catch(() => null)
    tasks.set(id, t ? await loadBridgeTask(t) : null)
  }
  return tasks.get(id) ?? null
}

const per = new Map<string, { n: number; agree: number; skipped: number }>()
const kinds = new Map<string, { n: number; agree: number }>()
const examples: string[] = []
for (const line of readFileSync(file, 'utf8').split('\n')) {
  if (!line.trim()) continue
  const c = JSON.parse(line) as Candidate
  const s = per.get(c.category) ?? { n: 0, agree: 0, skipped: 0 }
  per.set(c.category, s)
  const bt = await task(c.id)
  if (!bt) {
    s.skipped++
    continue
  }
  const calls: TracedCall[] = []
  const trace = { append: (row: TracedCall) => calls.push(row) } as unknown as TraceLog
  const provider = {
    validateArguments: bt.env.validate_arguments,
    tools: () =>
      bt.env.tools.map((t) => ({
        name: t.name,
        description: '',
        inputSchema: ('parameters' in t ? t.parameters : {}) as Record<string, unknown>,
      })),
    call: async () => ({ status: 'ok' as const, text: 'done' }),
  }
  const d = new Dispatcher(provider, null, trace)
  for (const call of c.calls) {
    let args: unknown
    try {
      args = JSON.parse(call.arguments)
    } catch {
      args = call.arguments
    }
    await d.call(call.name, args, call.arguments)
  }
  const { grade } = await gradeAll(bt.graders, {
    env: bt.env,
    initialWorld: bt.env.world,
    world: bt.env.world,
    calls,
    reference: bt.reference,
    workspace: '/nonexistent',
    answer: 'I cannot help with that using these functions.',
  })
  const ours = grade.reward === 1
  s.n++
  const kind = c.kind.split(':')[0] as string
  const k = kinds.get(kind) ?? { n: 0, agree: 0 }
  kinds.set(kind, k)
  k.n++
  if (ours === c.bfcl) {
    s.agree++
    k.agree++
  } else {
    if (process.env.DISAGREEMENTS) appendFileSync(process.env.DISAGREEMENTS, `${line}\n`)
    if (examples.length < 40)
      examples.push(
        `${c.id} ${c.kind}: BFCL ${c.bfcl ? 'valid' : 'invalid'}, ours ${grade.code} (${grade.reason})`,
      )
  }
}
let n = 0
let agree = 0
let skipped = 0
for (const [cat, s] of [...per.entries()].sort()) {
  n += s.n
  agree += s.agree
  skipped += s.skipped
  process.stdout.write(
    `${cat.padEnd(24)} ${String(s.n).padStart(6)} candidates  ${((100 * s.agree) / Math.max(1, s.n)).toFixed(2)}% agree${s.skipped ? `  (${s.skipped} on skipped rows)` : ''}\n`,
  )
}
process.stdout.write(
  `\nall ${n} candidates: ${((100 * agree) / Math.max(1, n)).toFixed(2)}% agree; ${skipped} on rows the import skipped\n`,
)
for (const [k, s] of [...kinds.entries()].sort())
  process.stdout.write(`  ${k.padEnd(16)} ${s.n} ${((100 * s.agree) / s.n).toFixed(2)}%\n`)
process.stdout.write(`\nfirst disagreements:\n${examples.join('\n')}\n`)
