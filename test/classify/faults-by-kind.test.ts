// Faults of the gateway and the grader, by kind, each with more than one manifestation: a refusal is
// infrastructure or budget, a grader that crashes is not a verdict, an empty deliverable is flagged,
// one leg artifact holds one run, published rows that contradict themselves are never losses.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { AttemptInput } from '../../src/classify/classes.js'
import { classifyAttempts } from '../../src/classify/classify.js'
import { DEFAULT_CLASSIFY } from '../../src/classify/options.js'
import { detect } from '../../src/detect/decide.js'
import { healthNoticeBody, prCommentBody, trackingIssueBody } from '../../src/github/render.js'
import { ledgerIdentity, mixedRuns, readLegArtifacts } from '../../src/ingest/artifacts.js'
import { fromOpenHands } from '../../src/ingest/published/formats.js'
import { ManifestSchema } from '../../src/manifest/schema.js'
import { describeContract, readByContract, verifierContract } from '../../src/panel/contract.js'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { planIdentity } from '../../src/plan/identity.js'
import type { AttemptRecord, LegRecord } from '../../src/records/attempt.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import type { LedgerRow } from '../../src/records/ledger.js'
import { checkLedger } from '../../src/records/ledger-check.js'
import { evaluatedShareHtml, evaluatedShareMarkdown } from '../../src/report/classification.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { jobSummary } from '../../src/report/summary.js'
import { diffPaths, testOnlyDiff } from '../../src/run/diff-paths.js'
import { decodeUtf8 } from '../../src/util/utf8.js'
import {
  attempt,
  ids,
  ledgerFor,
  makePlan,
  pairedOutcomes,
  writeArtifacts,
  writePlan,
} from '../compare/fixtures.js'
import { policy, ref } from '../detect/fixtures.js'

const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
const classify = (records: AttemptRecord[], opts = DEFAULT_CLASSIFY) => {
  const k = classifyAttempts(
    records.map(
      (record, i): AttemptInput => ({ record, file: 'leg/attempts.jsonl', line: i + 1, ledgerRows: null }),
    ),
    opts,
  )
  return { classes: [...k.byKey.values()], inputErrors: k.inputErrors }
}

/** An unresolved attempt whose last request the gateway refused with `errorClass` / `status`, exit clean. */
function refusedAtEnd(instance: string, errorClass: string, status: number, flag: string): AttemptRecord {
  const a = attempt(plan, { cell: 'b', instance, outcome: 'unresolved' })
  a.exit = { class: 'clean', code: 0, signal: null, reason: null }
  const rows = ledgerFor(a)
  rows[rows.length - 1] = {
    ...rows.at(-1)!,
    status: 'failure',
    http_status: status,
    error: { class: errorClass, code: String(status), message: null },
  }
  a.ledger_check = checkLedger(rows, null)
  a.telemetry = { ...a.telemetry, flags: [...a.telemetry.flags, flag] }
  return a
}

describe('a gateway refusal of the harness’s request is infrastructure, never the agent’s failure', () => {
  it('a rate refusal the harness swallowed (clean exit) is quota, even with per-attempt limits declared', () => {
    const a = refusedAtEnd('t-001', 'rate_limited', 429, 'gateway_refused_rate')
    const { classes } = classify([a], { ...DEFAULT_CLASSIFY, declaredLimits: true })
    expect(classes[0]).toMatchObject({ outcome_class: 'quota', group: 'infrastructure' })
    expect(classes[0]?.reason).toMatch(
      /stopped by a rate limit by the gateway \(last request: rate_limited 429\)/,
    )
  })

  it('an auth refusal at the gateway (key blocked) is auth', () => {
    const a = refusedAtEnd('t-002', 'upstream_auth', 401, 'gateway_refused_auth')
    const { classes } = classify([a])
    expect(classes[0]).toMatchObject({ outcome_class: 'auth', group: 'infrastructure' })
    expect(classes[0]?.reason).toContain(
      'the last model request was refused by the gateway (upstream_auth 401)',
    )
  })

  it('without a gateway refusal a clean unresolved attempt stays the agent’s', () => {
    const a = refusedAtEnd('t-003', 'upstream_5xx', 500, 'none')
    expect(classify([a]).classes[0]?.outcome_class).toBe('unresolved')
  })
})

describe('a grader that crashes is not a verdict', () => {
  const command = (over: Record<string, unknown>) =>
    verifierContract({ kind: 'command', command: 'grade', timeout_s: 60, ...over } as never)

  it('default command contract: a traceback exit 1 or a decode error exit 1 with no reward is grader error', () => {
    const c = command({})
    expect(c).toEqual({ kind: 'reward_file' })
    for (const exitCode of [1, 2]) {
      const v = readByContract(c, { exitCode, signal: null, reward: null, report: null })
      expect(v.status).toBe('error')
      expect(v.reason).toContain(
        `wrote no reward (exited ${exitCode}): grader error, never read as a failure`,
      )
    }
    const failed = readByContract(c, {
      exitCode: 1,
      signal: null,
      reward: { status: 'fail', reward: 0, reason: null },
      report: null,
    })
    expect(failed).toEqual({ status: 'fail', reward: 0, reason: null })
  })

  it('exit_codes: pytest 1 is a failure, 2–5 and signals are grader errors', () => {
    const c = command({ contract: 'exit_codes', exit_codes: { pass: [0], fail: [1] } })
    const at = (exitCode: number | null, signal: string | null = null) =>
      readByContract(c, { exitCode, signal, reward: null, report: null }).status
    expect([at(0), at(1), at(2), at(3), at(4), at(5), at(null, 'SIGSEGV')]).toEqual([
      'pass',
      'fail',
      'error',
      'error',
      'error',
      'error',
      'error',
    ])
    expect(describeContract(c, 'command')).toBe(
      'exit_codes: pass 0, fail 1 (unless the error output ends in an uncaught exception raised outside the workspace: grader_error); any other exit or a signal is grader_error',
    )
  })

  it('report contract: no report naming the instance is a grader error whatever the exit', () => {
    const c = command({ reports: true })
    expect(c).toEqual({ kind: 'report' })
    expect(
      readByContract(c, { exitCode: 0, signal: null, reward: null, report: null }, 'verifier', 'i-9').reason,
    ).toBe('the grader wrote no report naming i-9 (exit 0): grader error, no exit-code fallback')
  })

  it('the manifest refuses a contract that cannot tell a crash from a failure', () => {
    const base = (verifier: Record<string, unknown>) => ({
      schema_version: 1,
      experiment: { id: 'e' },
      model: { id: 'm', provider: 'openai', api: 'chat', base_url: 'http://127.0.0.1:9' },
      benchmark: { family: 'f', revision: 'r', setup: 'prep {instance} {workspace} {out}', verifier },
      panel: { source: 'inline', instances: ['i-1'] },
      cells: [{ id: 'a', harness: 'command', version: '1', config: { command: 'true' } }],
      baseline: 'a',
    })
    const problems = (verifier: Record<string, unknown>) => {
      const r = ManifestSchema.safeParse(base(verifier))
      return r.success
        ? []
        : r.error.issues
            .map((i) => `${i.path.join('.')}: ${i.message}`)
            .filter((p) => p.startsWith('benchmark.'))
    }
    expect(problems({ kind: 'command', command: 'g', contract: 'exit_codes' })).toEqual([
      'benchmark.verifier.exit_codes: contract exit_codes needs exit_codes: { pass: [0], fail: [...] } — the codes that mean "tests failed", so that any other exit is a grader error',
    ])
    expect(
      problems({
        kind: 'command',
        command: 'g',
        contract: 'exit_codes',
        exit_codes: { pass: [0, 1], fail: [1] },
      }),
    ).toEqual(['benchmark.verifier.exit_codes.fail: exit code 1 cannot mean both pass and fail'])
    expect(problems({ kind: 'command', command: 'g', reports: true, contract: 'reward_file' })).toEqual([
      'benchmark.verifier.reports: reports: true is contract report; it contradicts contract reward_file',
    ])
  })

  it('published rows whose own fields disagree are contradictory, listed, never a loss', () => {
    const sys = fromOpenHands(
      {
        'a-1': { resolved: false, cost: 0.1, report: { resolved: true } },
        'a-2': { resolved: true, cost: 0.1, test_result: { report: { resolved: false } } },
        'a-3': { resolved: false, cost: 0.1, reward: 1 },
        'a-4': { resolved: false, cost: 0.1, reward: 0 },
      },
      null,
      'x.json',
      'sys',
      null,
    )
    expect([...sys.instances].map(([id, x]) => [id, x.trials[0]])).toEqual([
      ['a-1', 'contradictory'],
      ['a-2', 'contradictory'],
      ['a-3', 'contradictory'],
      ['a-4', 'unresolved'],
    ])
    expect(sys.notes.at(-1)).toMatch(
      /^3 contradictory row\(s\), their own fields disagree \(not counted, never a loss\): a-1 \(resolved false, its report says resolved true\); a-2/,
    )
  })

  it('bytes that are not UTF-8 are replaced and counted, never dropped; a spelled U+FFFD is not counted', () => {
    const latin1 = Buffer.concat([Buffer.from('+caf'), Buffer.from([0xe9]), Buffer.from(' ok\n')])
    expect(decodeUtf8(latin1)).toEqual({ text: '+caf\uFFFD ok\n', malformed: 1 })
    const mixed = Buffer.concat([Buffer.from('\uFFFD'), Buffer.from([0xff, 0xfe, 0x41])])
    expect(decodeUtf8(mixed)).toEqual({ text: '\uFFFD\uFFFD\uFFFDA', malformed: 2 })
  })
})

describe('an empty deliverable is flagged', () => {
  const resolvedWith = (instance: string, bytes: number, testOnly?: boolean) => {
    const a = attempt(plan, { cell: 'b', instance, outcome: 'resolved' })
    a.deliverable = {
      bytes,
      sha256: bytes ? 'x' : null,
      files_changed: bytes ? 1 : 0,
      ...(testOnly ? { test_only: true } : {}),
    }
    return a
  }

  it('resolved on an empty diff, and on a test-only diff: contradictory with the reason, listed', () => {
    const { classes, inputErrors } = classify([resolvedWith('t-001', 0), resolvedWith('t-002', 300, true)])
    expect(classes.map((c) => c.outcome_class)).toEqual(['contradictory', 'contradictory'])
    expect(inputErrors[0]?.message).toMatch(/^contradictory row: verifier pass but the diff is empty/)
    expect(inputErrors[1]).toMatchObject({ file: 'leg/attempts.jsonl', line: 2 })
    expect(inputErrors[1]?.message).toContain('the diff changes only test files (1): suspect')
  })

  it('a benchmark declared gradeable without a diff keeps the verdict', () => {
    const { classes } = classify([resolvedWith('t-003', 0), resolvedWith('t-004', 300, true)], {
      ...DEFAULT_CLASSIFY,
      gradeableWithoutDiff: true,
    })
    expect(classes.map((c) => c.outcome_class)).toEqual(['resolved', 'resolved'])
  })

  it('test files by convention; a diff touching source too is not test-only', () => {
    const diff = (...files: string[]) => files.map((f) => `diff --git a/${f} b/${f}\n+x\n`).join('')
    expect(diffPaths(diff('src/a.py', 'tests/test_a.py'))).toEqual(['src/a.py', 'tests/test_a.py'])
    expect(testOnlyDiff(diff('tests/test_a.py', 'pkg/b_test.go', 'web/c.spec.ts', 'conftest.py'))).toBe(true)
    expect(testOnlyDiff(diff('tests/test_a.py', 'src/a.py'))).toBe(false)
    expect(testOnlyDiff('')).toBe(false)
  })
})

describe('one run per leg artifact', () => {
  const leg = (over: Partial<LegRecord> = {}): LegRecord =>
    ({ run_id: 'run-5', leg_attempt: 2, plan_sha256: 'p'.repeat(64), ...over }) as LegRecord
  const row = (line: number, over: Partial<AttemptRecord>) => ({
    line,
    value: { ...attempt(plan, { cell: 'b', instance: `t-00${line}` }), run_id: 'run-5', ...over },
  })

  it('an attempt row of another run and one of another leg attempt: input errors at file:line, blocks set aside', () => {
    const r = mixedRuns(
      leg(),
      'b-s0/leg.json',
      [row(1, {}), row(2, { run_id: 'run-4' }), row(3, { leg_attempt: 1 })],
      'b-s0/attempts.jsonl',
      new Map([['run-5', 1]]),
      'b-s0/ledger.jsonl',
      'p'.repeat(64),
    )
    expect(r.errors).toEqual([
      {
        file: 'b-s0/attempts.jsonl',
        line: 2,
        message:
          'attempt row is from run run-4, but leg.json is run run-5 (leg attempt 2): one leg artifact mixes runs; the block is not compared',
      },
      {
        file: 'b-s0/attempts.jsonl',
        line: 3,
        message:
          'attempt row is from leg attempt 1, but leg.json is run run-5 (leg attempt 2): one leg artifact mixes runs; the block is not compared',
      },
    ])
    expect([...r.dropped].sort()).toEqual([2, 3])
    expect(r.invalid.map((x) => [x.instance, x.trial])).toEqual([
      ['t-002', 0],
      ['t-003', 0],
    ])
  })

  it('a ledger of another run, and a leg.json of another plan, mark every block of the leg', () => {
    const ledger = mixedRuns(
      leg(),
      'l',
      [row(1, {}), row(2, {})],
      'a',
      new Map([
        ['run-5', 1],
        ['run-3', 7],
      ]),
      'b-s0/ledger.jsonl',
      'p'.repeat(64),
    )
    expect(ledger.errors).toEqual([
      {
        file: 'b-s0/ledger.jsonl',
        line: 7,
        message:
          'ledger rows are from run run-3, but leg.json is run run-5 (leg attempt 2): one leg artifact mixes runs',
      },
    ])
    expect(ledger.dropped.size).toBe(2)
    const plan2 = mixedRuns(leg(), 'b-s0/leg.json', [row(1, {})], 'a', null, 'l', 'q'.repeat(64))
    expect(plan2.errors[0]?.message).toMatch(
      /^leg\.json was written under plan pppppppppppp, the plan read is qqqqqqqqqqqq/,
    )
    // A resumed leg names every run its files hold: no mixture.
    const resumed = mixedRuns(
      leg({ runs: ['run-4', 'run-5'] }),
      'l',
      [row(1, { run_id: 'run-4' })],
      'a',
      new Map([['run-4', 1]]),
      'l',
      'p'.repeat(64),
    )
    expect(resumed.errors).toEqual([])
  })
})

describe('one run per leg artifact: ledger rows carry the plan hash and the leg attempt too', () => {
  const P = 'p'.repeat(64)
  const leg = { run_id: 'run-5', leg_attempt: 2, plan_sha256: P } as LegRecord
  const rows = [1, 2].map((line) => ({
    line,
    value: { ...attempt(plan, { cell: 'b', instance: `t-00${line}` }), run_id: 'run-5' },
  }))
  const check = (identities: Array<[Parameters<typeof ledgerIdentity>[0], number]>) =>
    mixedRuns(
      leg,
      'b-s0/leg.json',
      rows,
      'b-s0/attempts.jsonl',
      new Map(identities.map(([a, line]) => [ledgerIdentity(a), line])),
      'b-s0/ledger.jsonl',
      P,
    )

  it('a ledger row from another plan hash: located input error, every block of the leg set aside', () => {
    const r = check([
      [{ run_id: 'run-5', plan_sha256: P, leg_attempt: 2 }, 1],
      [{ run_id: 'run-5', plan_sha256: 'q'.repeat(64), leg_attempt: 2 }, 9],
    ])
    expect(r.errors).toEqual([
      {
        file: 'b-s0/ledger.jsonl',
        line: 9,
        message:
          'ledger rows are from plan qqqqqqqqqqqq, but leg.json is run run-5 (leg attempt 2): one leg artifact mixes runs',
      },
    ])
    expect([...r.dropped].sort()).toEqual([1, 2])
    expect(r.invalid.map((x) => x.detail)).toEqual([
      'b-s0/ledger.jsonl holds rows of plan qqqqqqqqqqqq (a mixture of runs)',
      'b-s0/ledger.jsonl holds rows of plan qqqqqqqqqqqq (a mixture of runs)',
    ])
  })

  it('a ledger row from another leg attempt of the same run: located input error, blocks set aside', () => {
    const r = check([
      [{ run_id: 'run-5', plan_sha256: P, leg_attempt: 1 }, 4],
      [{ run_id: 'run-5', plan_sha256: P, leg_attempt: 2 }, 5],
    ])
    expect(r.errors).toEqual([
      {
        file: 'b-s0/ledger.jsonl',
        line: 4,
        message:
          'ledger rows are from leg attempt 1, but leg.json is run run-5 (leg attempt 2): one leg artifact mixes runs',
      },
    ])
    expect(r.dropped.size).toBe(2)
  })

  it('rows without the identity fields (written before them) are checked on their run id alone', () => {
    expect(check([[{ run_id: 'run-5' }, 1]]).errors).toEqual([])
    expect(check([[{ run_id: 'run-5', plan_sha256: P, leg_attempt: 2 }, 1]]).errors).toEqual([])
  })

  it('through aggregate: the mixture is an input error at ledger.jsonl:line and its blocks are incomplete', async () => {
    const p = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const atts = pairedOutcomes(p, { both: 2, bOnly: 1, cOnly: 1, neither: 0 }, ['a', 'b'])
    const sha = planIdentity(p)
    const dir = writeArtifacts(p, atts)
    // Stamp every file with the run identity, then slip one row of another plan into a's ledger and
    // one row of the previous leg attempt into b's.
    const forged: Record<string, (row: LedgerRow, i: number) => LedgerRow> = {
      a: (row, i) =>
        i === 2 ? { ...row, attribution: { ...row.attribution!, plan_sha256: 'f'.repeat(64) } } : row,
      b: (row, i) => (i === 0 ? { ...row, attribution: { ...row.attribution!, leg_attempt: 1 } } : row),
    }
    for (const l of p.legs) {
      const folder = path.join(dir, l.artifact)
      const legFile = path.join(folder, 'leg.json')
      const legJson = JSON.parse(readFileSync(legFile, 'utf8')) as LegRecord
      writeFileSync(legFile, JSON.stringify({ ...legJson, plan_sha256: sha, leg_attempt: 2 }))
      const attemptsFile = path.join(folder, 'attempts.jsonl')
      const stamped = readFileSync(attemptsFile, 'utf8')
        .trim()
        .split('\n')
        .map((x) => JSON.stringify({ ...JSON.parse(x), plan_sha256: sha, leg_attempt: 2 }))
      writeFileSync(attemptsFile, `${stamped.join('\n')}\n`)
      const ledgerFile = path.join(folder, 'ledger.jsonl')
      const ledger = readFileSync(ledgerFile, 'utf8')
        .trim()
        .split('\n')
        .map((x) => JSON.parse(x) as LedgerRow)
        .map((row) => ({ ...row, attribution: { ...row.attribution!, plan_sha256: sha, leg_attempt: 2 } }))
        .map((row, i) => forged[l.cell]!(row, i))
      writeFileSync(ledgerFile, `${ledger.map((x) => JSON.stringify(x)).join('\n')}\n`)
    }
    // The worker thread's reader finds the same mixtures at the same lines as this thread's.
    const here = await readLegArtifacts(p, dir, { threads: false })
    expect(await readLegArtifacts(p, dir, { threads: true })).toEqual(here)
    const out = mkdtempSync(path.join(tmpdir(), 'hw-mixed-'))
    const r = await aggregate({ plan: writePlan(p), artifacts: dir, out, resamples: 200 })
    const c = ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
    const legOf = (cell: string) => p.legs.find((l) => l.cell === cell)!.artifact
    const mixtures = c.input_errors.filter((e) => e.message.includes('one leg artifact mixes runs'))
    expect(mixtures).toEqual([
      {
        file: `${legOf('a')}/ledger.jsonl`,
        line: 3,
        message:
          'ledger rows are from plan ffffffffffff, but leg.json is run run-1 (leg attempt 2): one leg artifact mixes runs',
      },
      {
        file: `${legOf('b')}/ledger.jsonl`,
        line: 1,
        message:
          'ledger rows are from leg attempt 1, but leg.json is run run-1 (leg attempt 2): one leg artifact mixes runs',
      },
    ])
    // Every block holds a leg with a mixed ledger: none is compared, none counted as a loss.
    expect(c.blocks.incomplete.map((b) => b.instance).sort()).toEqual(ids(4))
    expect(c.blocks.complete).toBe(0)
    expect(c.comparisons[0]?.outcome.n).toBe(0)
  })
})

describe('the report’s first lines give each harness’s evaluated share', () => {
  /** Cells a and b on five instances; b's t-002 ended with a grader error (not evaluated). */
  async function sharedComparison() {
    const p = await makePlan({ panel: { source: 'inline', instances: ids(5) } })
    const atts = pairedOutcomes(p, { both: 3, bOnly: 1, cOnly: 1, neither: 0 }, ['a', 'b'], () => 0.1)
    const crashed = atts.find((x) => x.cell_id === 'b' && x.instance_id === 't-002')!
    crashed.outcome = 'ungraded'
    crashed.verifier = { ...crashed.verifier, status: 'error', reward: null }
    crashed.outcome_reason = 'the verifier wrote no reward (exited 1)'
    const out = mkdtempSync(path.join(tmpdir(), 'hw-share-'))
    const r = await aggregate({ plan: writePlan(p), artifacts: writeArtifacts(p, atts), out, resamples: 200 })
    const c = ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
    const harness = (id: string) => c.cells.find((x) => x.id === id)!.harness
    const name = (id: string) => (harness('a') === harness('b') ? id : harness(id))
    return { c, r, expected: `${name('a')}: 5 of 5 evaluated · ${name('b')}: 4 of 5 evaluated ⚠` }
  }

  it('report.md and the job summary: a harness with a grader error shows its gap at a glance', async () => {
    const { c, r, expected } = await sharedComparison()
    const md = renderMarkdownReport(c)
    expect(md.split('\n').slice(0, 12).join('\n')).toContain(`**Evaluated:** ${expected}`)
    // The aggregate step's job summary is the report.md it wrote.
    const summary = jobSummary(readFileSync(path.join(path.dirname(r.comparisonPath), 'report.md'), 'utf8'))
    expect(summary.split('\n').slice(0, 12).join('\n')).toContain(`**Evaluated:** ${expected}`)
  })

  it('report.html: the same figures right under the title, before the header table', async () => {
    const { c, expected } = await sharedComparison()
    const html = renderHtmlReport(c)
    const at = html.indexOf(`<p class="evaluated"><strong>Evaluated:</strong> ${expected}</p>`)
    expect(at).toBeGreaterThan(html.indexOf('<h1>'))
    expect(at).toBeLessThan(html.indexOf('<table class="kv">'))
  })

  it('the PR comment and the tracking issue carry the line in their head; after a rerun it is labelled', async () => {
    const { c, expected } = await sharedComparison()
    const d = detect({ current: ref(c), policy, quarantine: [] })
    const context = { decision: d, comparison: c, reportUrl: null }
    const pr = prCommentBody(context, 'exp')
    // In the head: before the verdict table, not only in the report sections further down.
    expect(pr.indexOf(`**Evaluated:** ${expected}`)).toBeGreaterThan(0)
    expect(pr.indexOf(`**Evaluated:** ${expected}`)).toBeLessThan(pr.indexOf('| comparison | status |'))
    const key = d.comparisons[0]!.key
    const issue = trackingIssueBody(context, key, {
      clean_runs: 0,
      confirmed_breaches: 0,
      last_status: d.status,
      last_run: null,
      recovered: false,
    })
    expect(issue.indexOf(`**Evaluated:** ${expected}`)).toBeLessThan(issue.indexOf('Experiment `'))
    // The evaluation-health notice, where a gap matters most, leads with it too.
    const notice = healthNoticeBody(context, {
      unhealthy_runs: 1,
      last_status: 'unhealthy',
      last_run: null,
      recovered: false,
    })
    expect(notice.indexOf(`**Evaluated:** ${expected}`)).toBeGreaterThan(0)
    expect(notice.indexOf(`**Evaluated:** ${expected}`)).toBeLessThan(notice.indexOf('Experiment `'))
    const later = prCommentBody({ ...context, decision: { ...d, round: 1 } }, 'exp')
    expect(later).toContain(`**Evaluated:** ${expected} (first run)`)
  })

  it('a name from a run is escaped at the rendering boundary: a code span in Markdown, entities in HTML', async () => {
    const { c } = await sharedComparison()
    const forged = structuredClone(c)
    forged.cells[0]!.harness = '<img src=x onerror=alert(1)>'
    forged.cells[1]!.harness = 'pi'
    expect(evaluatedShareMarkdown(forged)).toBe(
      `**Evaluated:** \`<img src=x onerror=alert(1)>\`: 5 of 5 evaluated · pi: 4 of 5 evaluated ⚠`,
    )
    expect(evaluatedShareHtml(forged)).toBe(
      '<p class="evaluated"><strong>Evaluated:</strong> &lt;img src=x onerror=alert(1)&gt;: 5 of 5 evaluated · pi: 4 of 5 evaluated ⚠</p>',
    )
    expect(renderHtmlReport(forged)).not.toContain('<img src=x')
  })

  it('a plain name that GitHub would turn into a link or a reference is escaped too', async () => {
    const { c } = await sharedComparison()
    const forged = structuredClone(c)
    forged.cells[0]!.harness = 'www.evil-example.com'
    forged.cells[1]!.harness = 'GH-1'
    const line = evaluatedShareMarkdown(forged)!
    // The autolink and the cross-reference are broken up; the text still reads the same.
    expect(line).not.toContain('www.evil-example.com')
    expect(line).not.toMatch(/\bGH-1\b/)
    expect(line.replace(/\\|\u200d|&#[0-9]+;/g, '')).toContain('evil-example')
  })
})
