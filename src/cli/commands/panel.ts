import os from 'node:os'
import path from 'node:path'
import type { Command } from 'commander'
import { SandboxSettingSchema } from '../../manifest/schema.js'
import { countReasons, importBfcl } from '../../panel/import/write.js'
import { badTasks, isGood, type PanelVerification, resolvePanelDir, verifyPanel } from '../../panel/verify.js'
import { chooseSandbox, type SandboxChoice } from '../../sandbox/select.js'
import { EXIT, HwError } from '../../util/errors.js'
import { quotePath } from '../../util/paths.js'

interface VerifyFlags {
  json?: boolean
  only?: string
  repeat: number
  concurrency: number
  logs?: string
  sandbox: string
}

/** `harness-watch panel verify <panel-dir>`: every task must start failing and pass with its solution. */
export function registerPanel(program: Command): void {
  const panel = program.command('panel').description('Work with panels of Harbor-layout task folders')
  panel
    .command('verify')
    .description(
      'Check every task: its verifier fails on the untouched repo and passes after solution/solve.sh (exit 1 naming bad tasks). ' +
        'A task folder that does not load (no tests/test.sh, a bad task.toml, …) stops it before any task runs: exit 2, every such folder named',
    )
    .argument('<panel-dir>', 'folder of task folders, or a built-in panel name (e.g. core)')
    .option('--json', 'print {"tasks":[{"id","start","solution"}]} on stdout')
    .option('--only <ids>', 'comma-separated task ids to check')
    .option('--repeat <k>', 'apply and grade each solution k times; disagreement = flaky', positiveInt, 1)
    .option('--concurrency <n>', 'tasks checked at once', positiveInt, 2)
    .option('--logs <dir>', 'keep each task’s start/solve/solution logs in <dir>/<id>/')
    .option(
      '--sandbox <backend>',
      'where solve.sh and the verifiers run: auto (namespace+uid when it works here, else env-only), namespace+uid (or fail), env-only, none',
      'auto',
    )
    .action(async (dirArg: string, flags: VerifyFlags) => {
      const dir = await resolvePanelDir(dirArg)
      const sandbox = await verifySandbox(flags.sandbox)
      process.stderr.write(`sandbox: ${sandbox.backend.kind}${sandbox.notes.map((n) => `; ${n}`).join('')}\n`)
      const only = flags.only
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean)
      const result = await verifyPanel(dir, {
        only,
        repeat: flags.repeat,
        concurrency: flags.concurrency,
        logsDir: flags.logs,
        sandbox: sandbox.backend,
        onTask: (t, done, total, ms) => {
          const mark = isGood(t) ? 'ok' : `BAD: ${t.note ?? ''}`
          process.stderr.write(
            `[${done}/${total}] ${t.id}: start ${t.start}, solution ${t.solution} (${(ms / 1000).toFixed(1)} s) ${mark}\n`,
          )
        },
      })
      const bad = badTasks(result)
      if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`)
      else process.stdout.write(renderTable(result))
      if (bad.length > 0) {
        process.stderr.write(`${bad.length} bad task(s): ${bad.join(', ')}\n`)
        if (!flags.logs) process.stderr.write('(rerun with --logs <dir> to keep the verifier output)\n')
      }
      process.exitCode = bad.length > 0 ? EXIT.failure : EXIT.ok
    })
  panel
    .command('import')
    .description("Convert a benchmark's files into bridge task folders")
    .command('bfcl')
    .description(
      'BFCL v4 question file (+ its possible_answer file), or a BFCL data folder → one bridge task per row BFCL grades by AST or relevance; every other row listed with its reason',
    )
    .argument('<file-or-folder>', 'BFCL_v4_<category>.json (JSON Lines), or the folder holding them')
    .requiredOption('--out <dir>', 'folder to write the task folders into (a panel folder)')
    .option('--answers <file>', 'the ground truth (default: possible_answer/<same name> beside <file>)')
    .action(async (source: string, flags: { out: string; answers?: string }) => {
      const r = await importBfcl(source, flags.out, flags.answers)
      // Not one line is a JSON object: another kind of file (a pretty-printed JSON document, say), said
      // once rather than once per line.
      if (r.tasks.length === 0 && r.skipped.length > 0 && r.skipped.every((s) => s.notObject)) {
        process.stderr.write(
          `nothing imported: none of the ${r.skipped.length} lines of ${quotePath(source)} is a JSON object, where a BFCL file holds one question object per line (JSON Lines); the first: ${r.skipped[0]!.reason}\n`,
        )
        process.exitCode = EXIT.failure
        return
      }
      for (const s of r.skipped) process.stderr.write(`skipped ${s.id}: ${s.reason}\n`)
      if (r.files.length > 1) {
        for (const f of r.files)
          process.stdout.write(`${f.category}: imported ${f.imported}, skipped ${f.skipped.length}\n`)
      }
      process.stdout.write(
        `imported ${r.tasks.length} task(s) into ${flags.out}; skipped ${r.skipped.length}\n`,
      )
      for (const [reason, n] of countReasons(r.skipped)) process.stdout.write(`  skipped ${n}: ${reason}\n`)
      if (r.tasks.length > 0)
        process.stdout.write(`check them with: harness-watch panel verify ${flags.out}\n`)
      else process.stderr.write('nothing imported\n')
      process.exitCode = r.tasks.length > 0 ? EXIT.ok : EXIT.failure
    })
}

/** The readable form of a panel verification: one row per task, then a count line. */
export function renderTable(v: PanelVerification): string {
  const w = Math.max(4, ...v.tasks.map((t) => t.id.length))
  const rows = [`${'task'.padEnd(w)}  start    solution  verdict`]
  for (const t of v.tasks) {
    const verdict = isGood(t) ? 'ok' : `BAD (${t.note ?? 'expected start fail, solution pass'})`
    rows.push(`${t.id.padEnd(w)}  ${t.start.padEnd(7)}  ${t.solution.padEnd(8)}  ${verdict}`)
  }
  const bad = badTasks(v).length
  rows.push(`${v.tasks.length} task(s): ${v.tasks.length - bad} ok, ${bad} bad`)
  return `${rows.join('\n')}\n`
}

function positiveInt(v: string): number {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1) throw new HwError('usage', `expected a positive integer, got "${v}"`)
  return n
}

/**
 * The sandbox of `panel verify --sandbox <backend>`: `auto` takes namespace+uid when it probes ok and
 * passes its canary, else env-only (a panel author's own scripts; the line printed says which);
 * `namespace+uid` fails closed. Throws HwError `bad_option` for an unknown name.
 */
async function verifySandbox(name: string): Promise<SandboxChoice> {
  const parsed = SandboxSettingSchema.shape.backend.unwrap().safeParse(name)
  if (!parsed.success) {
    throw new HwError('bad_option', `--sandbox: unknown backend "${name}"`, {
      help: 'use auto, namespace+uid, env-only or none',
    })
  }
  const workRoot = path.join(os.tmpdir(), 'hw-verify')
  return chooseSandbox(
    { backend: parsed.data, allow_unisolated: parsed.data !== 'namespace+uid', read_only: [] },
    workRoot,
  )
}
