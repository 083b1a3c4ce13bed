import os from 'node:os'
import path from 'node:path'
import type { Command } from 'commander'
import { SandboxSettingSchema } from '../../manifest/schema.js'
import { importBfcl } from '../../panel/import/write.js'
import { badTasks, isGood, type PanelVerification, resolvePanelDir, verifyPanel } from '../../panel/verify.js'
import { chooseSandbox, type SandboxChoice } from '../../sandbox/select.js'
import { EXIT, HwError } from '../../util/errors.js'

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
      'Check every task: its verifier fails on the untouched repo and passes after solution/solve.sh (exit 1 naming bad tasks)',
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
    .description('BFCL question file (+ its possible_answer file) → one bridge task per single-turn row')
    .argument('<file>', 'BFCL_v4_<category>.json (JSON Lines)')
    .requiredOption('--out <dir>', 'folder to write the task folders into (a panel folder)')
    .option('--answers <file>', 'the ground truth (default: possible_answer/<same name> beside <file>)')
    .action(async (file: string, flags: { out: string; answers?: string }) => {
      const r = await importBfcl(file, flags.out, flags.answers)
      for (const s of r.skipped) process.stderr.write(`skipped ${s.id}: ${s.reason}\n`)
      process.stdout.write(
        `imported ${r.tasks.length} task(s) into ${flags.out}; skipped ${r.skipped.length}\n`,
      )
      if (r.tasks.length > 0)
        process.stdout.write(`check them with: harness-watch panel verify ${flags.out}\n`)
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
