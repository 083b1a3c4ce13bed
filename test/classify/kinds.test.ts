// One test per kind of issue 12 ("Kinds found" 1–7), built from fixtures this project writes itself:
// attempt records and ledgers through the real aggregate, then the real detection stage.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { classifyAttempts } from '../../src/classify/classify.js'
import { DEFAULT_CLASSIFY } from '../../src/classify/options.js'
import { detect } from '../../src/detect/decide.js'
import { noticeKind } from '../../src/github/notice.js'
import { failureOf } from '../../src/github/publish.js'
import { ManifestSchema } from '../../src/manifest/schema.js'
import { aggregate, aggregationFailure } from '../../src/pipeline/aggregate.js'
import type { AttemptRecord } from '../../src/records/attempt.js'
import { type Comparison, ComparisonSchema } from '../../src/records/comparison.js'
import { checkLedger } from '../../src/records/ledger-check.js'
import {
  attempt,
  ids,
  ledgerFor,
  makePlan,
  pairedOutcomes,
  writeArtifacts,
  writePlan,
} from '../compare/fixtures.js'

type Plan = Awaited<ReturnType<typeof makePlan>>

async function run(plan: Plan, atts: AttemptRecord[]): Promise<Comparison> {
  const out = mkdtempSync(path.join(tmpdir(), 'hw-classify-'))
  const r = await aggregate({
    plan: writePlan(plan),
    artifacts: writeArtifacts(plan, atts),
    out,
    resamples: 1000,
  })
  return ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
}

function decide(plan: Plan, c: Comparison) {
  const m = ManifestSchema.parse(plan.manifest)
  return detect({
    current: { comparison: c, path: 'comparison.json', sha256: 'x' },
    policy: { thresholds: m.thresholds, confirmation: m.confirmation, reporting: m.reporting },
    quarantine: [],
  })
}

/** Same spend for both cells; treatment b's ledger logs every request twice on the first `dup` instances. */
function duplicated(plan: Plan, dup: number): AttemptRecord[] {
  const atts = pairedOutcomes(plan, { both: 20, bOnly: 0, cOnly: 0, neither: 0 }, ['a', 'b'], () => 0.1)
  for (const a of atts) {
    if (a.cell_id !== 'b' || Number(a.instance_id.slice(2)) > dup) continue
    const rows = ledgerFor(a)
    const twice = [
      ...rows,
      ...rows.map((r) => ({ ...r, request_id: `${r.request_id}-dup`, call_type: 'acompletion' })),
    ]
    const forwarded = rows.length
    a.ledger_check = checkLedger(twice, forwarded)
    a.telemetry = {
      ...a.telemetry,
      rows: twice.length,
      proxy_requests: twice.length,
      spend_usd: 0.2,
      reconciliation: {
        rows_fetched: twice.length,
        duplicates_dropped: 0,
        rows_spend_usd: 0.2,
        key_spend_usd: null,
        tolerance_usd: 0.0001,
        proxy_requests: forwarded,
        waited_ms: 0,
      },
    }
  }
  return atts
}

describe('kind 1: a ledger that over-counts is a telemetry anomaly, never 2× spend', () => {
  it('a duplicated cell no longer shows ~2× spend and raises no cost breach; raw and de-duplicated figures are reported', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(20) } })
    const atts = duplicated(plan, 20)
    const b1 = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-001')!
    expect(b1.ledger_check).toMatchObject({ rows: 24, forwarded: 12, suspected_duplicates: 12 })
    expect(b1.ledger_check!.raw_spend_usd).toBeCloseTo(0.2, 10)
    expect(b1.ledger_check!.dedup_spend_usd).toBeCloseTo(0.1, 10)
    const c = await run(plan, atts)
    const cmp = c.comparisons[0]!
    // Outcomes stand (the agent's work is fine); no resource figure rests on the anomalous ledger.
    expect(cmp.denominators.outcome).toBe(20)
    expect(cmp.denominators.cost).toBe(0)
    expect(cmp.metrics.spend_usd.ratio_of_means.estimate).toBeNull()
    const cell = c.classification!.cells.find((x) => x.cell === 'b')!
    expect(cell.telemetry).toEqual({ suspected_duplicate_logging: 20 })
    expect(cell.anomalous_raw_spend_usd).toBeCloseTo(4, 8)
    expect(cell.anomalous_dedup_spend_usd).toBeCloseTo(2, 8)
    const d = decide(plan, c)
    expect(d.signals).toEqual([])
    expect(d.status).not.toBe('breach')
    expect(d.health.find((h) => h.code === 'telemetry_anomaly')?.message).toMatch(
      /suspected_duplicate_logging ×20, raw \$4 \/ de-duplicated \$2/,
    )
  })

  it('rows below the forwarded count are rows lost; rows above without duplicates are named as such', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(2) } })
    const lost = attempt(plan, { cell: 'a', instance: 't-001', requests: 8 })
    lost.telemetry.reconciliation = {
      rows_fetched: 8,
      duplicates_dropped: 0,
      rows_spend_usd: 0.1,
      key_spend_usd: null,
      tolerance_usd: 0,
      proxy_requests: 9,
      waited_ms: 0,
    }
    const above = attempt(plan, { cell: 'b', instance: 't-001', requests: 12 })
    // 12 distinct requests (different answers), 10 forwarded: more rows than requests, no duplicate.
    const distinct = ledgerFor(above).map((r, i) => ({ ...r, tokens: { ...r.tokens, output: 50 + i } }))
    above.ledger_check = checkLedger(distinct, 10)
    const k = classifyAttempts([
      { record: lost, file: 'a/attempts.jsonl', line: 1, ledgerRows: 8 },
      { record: above, file: 'b/attempts.jsonl', line: 1, ledgerRows: 12 },
    ])
    const [x, y] = [...k.byKey.values()]
    expect(x).toMatchObject({
      outcome_class: 'resolved',
      telemetry_class: 'telemetry_anomaly',
      anomaly: 'rows_lost',
    })
    expect(x!.telemetry_reason).toMatch(/8 of the 9 requests/)
    expect(y).toMatchObject({ anomaly: 'rows_above_forwarded' })
    expect(y!.ledger).toMatchObject({ rows: 12, forwarded: 10, dedup_rows: 12 })
  })
})

describe('kind 2: a report-producing verifier decides or the attempt is ungraded', () => {
  it('a grader crash is grader_error and an ungraded verdict is ungraded: never a loss or a win', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(10) } })
    const atts = pairedOutcomes(plan, { both: 10, bOnly: 0, cOnly: 0, neither: 0 })
    const crash = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-001')!
    crash.outcome = 'ungraded'
    crash.outcome_reason = 'verifier error'
    crash.verifier = { ...crash.verifier, status: 'error', exit_code: 1 }
    const dropped = atts.find((a) => a.cell_id === 'a' && a.instance_id === 't-002')!
    dropped.outcome = 'ungraded'
    dropped.outcome_reason = 'verifier timeout'
    dropped.verifier = { ...dropped.verifier, status: 'timeout', exit_code: null }
    const c = await run(plan, atts)
    const o = c.comparisons[0]!.outcome
    expect([o.n, o.baseline_only, o.treatment_only]).toEqual([8, 0, 0])
    expect(c.classification!.denominators.grading).toEqual({ grader_error: 1, ungraded: 1 })
    expect(c.classification!.line).toMatch(/ungraded: grader_error ×1, ungraded ×1/)
  })
})

describe('kind 3: pre-agent failures are infrastructure, by evidence across attempts', () => {
  /** Treatment b's shard 2 (the last 7 of 20 instances) dies at startup: 0 requests, 3 s, one signature. */
  function deadShard(atts: AttemptRecord[], from: number, code = 'harness exited: config error') {
    for (const a of atts) {
      if (a.cell_id !== 'b' || Number(a.instance_id.slice(2)) < from) continue
      a.outcome = 'unresolved'
      a.verifier = { ...a.verifier, status: 'fail' }
      a.exit = { class: 'error', code: 2, signal: null, reason: `startup: ${code}` }
      a.phases_ms = { ...a.phases_ms, harness: 3000 }
      a.deliverable = { bytes: 0, sha256: null, files_changed: 0 }
      a.telemetry = { ...a.telemetry, rows: 0, proxy_requests: 0, spend_usd: 0, coverage: 'missing' }
    }
  }

  it('a dead shard gives no −35-point breach: its attempts are harness_startup, the comparison is inconclusive', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(20) } })
    const atts = pairedOutcomes(plan, { both: 20, bOnly: 0, cOnly: 0, neither: 0 })
    deadShard(atts, 14)
    const c = await run(plan, atts)
    const cmp = c.comparisons[0]!
    expect(cmp.outcome.baseline_only).toBe(0)
    expect(cmp.outcome.n).toBe(13)
    expect(c.classification!.denominators).toMatchObject({
      scheduled: 40,
      evaluated: 33,
      infrastructure: { harness_startup: 7 },
    })
    expect(c.classification!.findings.map((f) => f.code)).toContain('shared_error_signature')
    const d = decide(plan, c)
    expect(d.signals).toEqual([])
    expect(d.status).toBe('inconclusive')
  })

  it('a whole dead cell is not evaluated: no test, no difference', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(10) } })
    const atts = pairedOutcomes(plan, { both: 10, bOnly: 0, cOnly: 0, neither: 0 })
    deadShard(atts, 1, 'auth: 401 invalid api key')
    const c = await run(plan, atts)
    const cmp = c.comparisons[0]!
    expect(cmp.not_evaluated).toMatch(
      /cell b not evaluated: no attempt reached an agent outcome \(auth ×10\)/,
    )
    expect(cmp.tests).toEqual([])
    expect(cmp.outcome.diff_pp).toBeNull()
    const d = decide(plan, c)
    expect(d.comparisons[0]!.status).toBe('inconclusive')
  })

  it('a quota stop after the agent edited files is quota, not the agent’s failure', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(1) } })
    const a = attempt(plan, { cell: 'b', instance: 't-001', outcome: 'unresolved' })
    a.exit = { class: 'error', code: 1, signal: null, reason: 'exit code 1' }
    const rows = ledgerFor(a)
    rows[rows.length - 1] = {
      ...rows.at(-1)!,
      status: 'failure',
      http_status: 429,
      error: { class: 'rate_limited', code: '429', message: null },
    }
    a.ledger_check = checkLedger(rows, null)
    const k = classifyAttempts([{ record: a, file: 'f', line: 1, ledgerRows: null }])
    const x = [...k.byKey.values()][0]!
    expect(x.outcome_class).toBe('quota')
    expect(x.reason).toMatch(/after 120 bytes of work/)
  })
})

describe('kind 4: telemetry that is implausibly thin is telemetry_suspect', () => {
  it('a cell logging a fifth of the others’ rows is suspect: no resource metrics, no improvement listed', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(12) } })
    const atts = pairedOutcomes(plan, { both: 12, bOnly: 0, cOnly: 0, neither: 0 }, ['a', 'b'], (cell) =>
      cell === 'a' ? 0.5 : 0.05,
    )
    for (const a of atts) if (a.cell_id === 'b') a.telemetry = { ...a.telemetry, rows: 2, proxy_requests: 2 }
    for (const a of atts)
      if (a.cell_id === 'a') a.telemetry = { ...a.telemetry, rows: 10, proxy_requests: 10 }
    const c = await run(plan, atts)
    expect(c.classification!.findings.find((f) => f.code === 'telemetry_thin_cell')?.message).toMatch(
      /cell b logs a median 20% of the other cells' ledger rows/,
    )
    expect(c.comparisons[0]!.denominators.cost).toBe(0)
    const d = decide(plan, c)
    expect(d.improvements).toEqual([])
  })

  it('five cells: a cell’s share is its rows over the median of the four others’ per instance, then the median over instances', async () => {
    const cells = ['a', 'b', 'c', 'd', 'e']
    const plan = await makePlan({
      panel: { source: 'inline', instances: ids(7) },
      cells: cells.map((id, i) => ({ id, harness: 'pi', version: `0.73.${i}` })),
    })
    // rows per (cell, instance): c is thin; the others vary so the medians of even and odd lists differ
    const rowsOf = (cell: string, i: number) =>
      ({ a: 10 + i, b: 12, c: 2 + (i % 3), d: 8 + 2 * (i % 2), e: 14 - i })[cell]!
    const atts = cells.flatMap((cell) =>
      plan.panel.instances.map((instance, i) => {
        const a = attempt(plan, { cell, instance })
        a.telemetry = { ...a.telemetry, rows: rowsOf(cell, i), proxy_requests: rowsOf(cell, i) }
        return a
      }),
    )
    const median = (xs: number[]) => {
      const s = [...xs].sort((x, y) => x - y)
      const m = s.length >> 1
      return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
    }
    const shareOf = (cell: string) =>
      median(
        plan.panel.instances.map(
          (_, i) => rowsOf(cell, i) / median(cells.filter((c) => c !== cell).map((c) => rowsOf(c, i))),
        ),
      )
    // per instance 2/11, 3/11.5, 4/12, 2/11.5, 3/11, 4/11, 2/10: the median is 3/11.5
    expect(shareOf('c')).toBeCloseTo(6 / 23, 12)
    const input = atts.map((record, k) => ({
      record,
      file: 'attempts.jsonl',
      line: k + 1,
      ledgerRows: record.telemetry.rows,
    }))
    const strict = classifyAttempts(input, { ...DEFAULT_CLASSIFY, minShare: 0.3 })
    const thin = strict.findings.filter((f) => f.code === 'telemetry_thin_cell')
    expect(thin.map((f) => f.cell)).toEqual(['c'])
    expect(thin[0]!.message).toContain(`logs a median ${(shareOf('c') * 100).toFixed(0)}% of the other cells`)
    expect(thin[0]!.attempts).toBe(7)
    // at the default threshold (0.25) the same cell is not thin
    expect(
      classifyAttempts(input, DEFAULT_CLASSIFY).findings.filter((f) => f.code === 'telemetry_thin_cell'),
    ).toEqual([])
  })

  it('rows far below the harness’s own request count are suspect; keep_suspect_outcomes false drops the outcome', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(1) } })
    const a = attempt(plan, { cell: 'a', instance: 't-001', requests: 3 })
    a.self_report = {
      input_tokens: null,
      output_tokens: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      cost_usd: null,
      requests: 30,
      turns: null,
    }
    const input = [{ record: a, file: 'f', line: 1, ledgerRows: null }]
    const kept = [...classifyAttempts(input).byKey.values()][0]!
    expect(kept).toMatchObject({ outcome_class: 'resolved', telemetry_class: 'telemetry_suspect' })
    expect(kept.telemetry_reason).toMatch(/3 ledger rows against 30 requests/)
    const dropped = [
      ...classifyAttempts(input, { ...DEFAULT_CLASSIFY, keepSuspectOutcome: false }).byKey.values(),
    ][0]!
    expect(dropped.outcome_class).toBe('telemetry_suspect')
  })
})

describe('kind 5: contradictory rows, the timeout policy and clustered timeouts', () => {
  it('verifier pass with outcome unresolved is an input error named with file:line, and the aggregation fails', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(3) } })
    const atts = pairedOutcomes(plan, { both: 3, bOnly: 0, cOnly: 0, neither: 0 })
    const bad = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-002')!
    bad.outcome = 'unresolved'
    bad.verifier = { ...bad.verifier, reward: 1 }
    const c = await run(plan, atts)
    const err = c.input_errors.find((e) => e.message.startsWith('contradictory row'))!
    expect(err.file).toMatch(/attempts\.jsonl$/)
    expect(err.line).toBe(2)
    expect(err.message).toMatch(/verifier pass \(reward 1\) but outcome unresolved/)
    expect(aggregationFailure(c)).toMatch(/contradictory row/)
    expect(c.comparisons[0]!.outcome.n).toBe(2)
  })

  it('timeout_policy decides a timed-out attempt; timeouts at one wall-clock value are flagged', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const input = ids(4).map((instance, i) => {
      const a = attempt(plan, { cell: 'a', instance, wallMs: 300_000 + i * 200 })
      a.timed_out = true
      a.exit = { class: 'timeout', code: null, signal: 'SIGKILL', reason: 'wall-clock limit reached' }
      return { record: a, file: 'f', line: i + 1, ledgerRows: null }
    })
    const opts = { ...DEFAULT_CLASSIFY, timeoutS: 900 }
    const decides = classifyAttempts(input, opts)
    expect([...decides.byKey.values()][0]!.outcome_class).toBe('resolved')
    expect([...decides.byKey.values()][0]!.reason).toMatch(/timed out; the completed verifier decides/)
    expect(decides.findings[0]!.message).toMatch(
      /4 of 4 timeouts ended at ~300 s, below the manifest's 900 s/,
    )
    const infra = classifyAttempts(input, { ...opts, timeoutPolicy: 'infra' })
    expect([...infra.byKey.values()].map((x) => x.outcome_class)).toEqual([
      'timeout',
      'timeout',
      'timeout',
      'timeout',
    ])
    const failure = classifyAttempts(input, { ...opts, timeoutPolicy: 'failure' })
    expect([...failure.byKey.values()][0]!.outcome_class).toBe('unresolved')
  })
})

describe('kind 7: gaps are reported, not hidden nor called a failed evaluation', () => {
  it('valid outcome pairs with too little cost coverage complete with gaps: no failed evaluation, no failed check', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(20) } })
    const c = await run(plan, duplicated(plan, 10))
    expect(c.comparisons[0]!.denominators).toMatchObject({ outcome: 20, cost: 10 })
    const d = decide(plan, c)
    expect(d.status).toBe('completed_with_gaps')
    expect(d.health.filter((h) => h.severity === 'error')).toEqual([])
    expect(failureOf(d)).toBeNull()
    expect(c.classification!.line).toBe(
      'scheduled 40 · evaluated 40 (outcome) · metered 30 (cost) · infrastructure failures: none',
    )
  })

  it('usage cut off mid-answer is shown apart and never summed into cost', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(10) } })
    const atts = pairedOutcomes(plan, { both: 10, bOnly: 0, cOnly: 0, neither: 0 }, ['a', 'b'], () => 0.1)
    const cut = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-003')!
    cut.telemetry = { ...cut.telemetry, flags: ['usage_partial'], spend_usd: 0.04 }
    const c = await run(plan, atts)
    const cell = c.classification!.cells.find((x) => x.cell === 'b')!
    expect(cell.partial_usage_attempts).toBe(1)
    expect(cell.partial_usage_spend_usd).toBeCloseTo(0.04, 10)
    const b = c.cells.find((x) => x.id === 'b')!
    expect(b.intent_to_treat.spend_usd).toBeCloseTo(0.9, 10)
    expect(b.intent_to_treat.reason).toMatch(/lower bound: 1 of 10 trials/)
    expect(c.comparisons[0]!.denominators).toMatchObject({ outcome: 10, cost: 9 })
  })
})

describe('kind 6: a short leg fails the aggregation loudly, naming the leg and the counts', () => {
  it('a leg folder with fewer rows than leg.json and the plan say', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(6) }, shards: { count: 2 } })
    const atts = pairedOutcomes(plan, { both: 6, bOnly: 0, cOnly: 0, neither: 0 })
    const leg = plan.legs.find((l) => l.cell === 'b')!
    const lost = leg.instances[0]!
    const kept = atts.filter((a) => !(a.cell_id === 'b' && a.instance_id === lost))
    const out = mkdtempSync(path.join(tmpdir(), 'hw-classify-'))
    const dir = writeArtifacts(plan, kept)
    // leg.json still says what ran: one more attempt than attempts.jsonl holds
    const legFile = path.join(dir, leg.artifact, 'leg.json')
    const record = JSON.parse(readFileSync(legFile, 'utf8'))
    record.attempts += 1
    writeFileSync(legFile, JSON.stringify(record))
    const r = await aggregate({ plan: writePlan(plan), artifacts: dir, out, resamples: 1000 })
    const n = leg.instances.length
    expect(aggregationFailure(r.comparison)).toMatch(
      new RegExp(
        `short leg ${leg.leg}: attempts.jsonl holds ${n - 1} rows, leg.json says ${n}; ${n - 1} of ${n} planned trials`,
      ),
    )
  })
})

describe('kind 6: a re-uploaded leg replaces an earlier one only by an explicit run attempt', () => {
  /** Copy leg `artifact` of `from` into `dir` as `name`, its leg.json stating run `run_id`. */
  function upload(from: string, dir: string, artifact: string, name: string, runId: string): void {
    cpSync(path.join(from, artifact), path.join(dir, name), { recursive: true })
    const legFile = path.join(dir, name, 'leg.json')
    writeFileSync(legFile, JSON.stringify({ ...JSON.parse(readFileSync(legFile, 'utf8')), run_id: runId }))
    // One run per leg artifact: its records and ledger state the same run as its leg.json.
    for (const f of ['attempts.jsonl', 'ledger.jsonl']) {
      const file = path.join(dir, name, f)
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
      const restamped = lines.map((l) => {
        const o = JSON.parse(l)
        if (f === 'attempts.jsonl') o.run_id = runId
        else if (o.attribution) o.attribution.run_id = runId
        return JSON.stringify(o)
      })
      writeFileSync(file, restamped.map((l) => `${l}\n`).join(''))
    }
  }
  /** A tie (b resolves everything, as a does) uploaded as attempt 1, and a forged b with no resolution. */
  async function tieAndForgery() {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const tie = writeArtifacts(plan, pairedOutcomes(plan, { both: 4, bOnly: 0, cOnly: 0, neither: 0 }))
    const loss = writeArtifacts(plan, pairedOutcomes(plan, { both: 0, bOnly: 4, cOnly: 0, neither: 0 }))
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-reupload-'))
    for (const leg of plan.legs) upload(tie, dir, leg.artifact, `${leg.artifact}-a1`, '777-1')
    const leg = plan.legs.find((l) => l.cell === 'b')!
    return { plan, dir, loss, leg }
  }
  const aggregateAt = async (
    plan: Plan,
    dir: string,
    runAttempt: number | null,
    workflowRun: string | null = '777',
  ) => {
    const out = mkdtempSync(path.join(tmpdir(), 'hw-classify-'))
    return aggregate({ plan: writePlan(plan), artifacts: dir, out, resamples: 1000, runAttempt, workflowRun })
  }

  it('a re-upload whose leg.json states another workflow run (GITHUB_RUN_ID) is refused, the tie stands', async () => {
    const { plan, dir, loss, leg } = await tieAndForgery()
    // Named and stamped for attempt 2, but of workflow run 888: a leg copied in from another run.
    upload(loss, dir, leg.artifact, `${leg.artifact}-a2`, '888-2')
    const r = await aggregateAt(plan, dir, 2)
    expect(r.comparison.comparisons[0]!.outcome).toMatchObject({ n: 4, both: 4, diff_pp: 0 })
    expect(r.comparison.input_errors).toContainEqual({
      file: `${leg.artifact}-a2/leg.json`,
      line: null,
      message: 'its leg.json states run "888-2", not one of this workflow run 777: refused',
    })
    expect(r.comparison.reuploads ?? []).toEqual([])
    // Outside Actions (no GITHUB_RUN_ID) the run is not checked: the same folder reads the re-upload.
    const free = await aggregateAt(plan, dir, 2, null)
    expect(free.comparison.comparisons[0]!.outcome).toMatchObject({ n: 4, both: 0, baseline_only: 4 })
  })

  it('the only upload of a leg from another workflow run is refused: the leg is missing, never read', async () => {
    const { plan, dir, leg } = await tieAndForgery()
    const other = mkdtempSync(path.join(tmpdir(), 'hw-reupload-'))
    for (const l of plan.legs)
      cpSync(path.join(dir, `${l.artifact}-a1`), path.join(other, `${l.artifact}-a1`), { recursive: true })
    // leg b's only upload states a run id that is not of the Actions form at all
    upload(dir, other, `${leg.artifact}-a1`, `${leg.artifact}-a1`, 'local-20261205T000000Z')
    const r = await aggregateAt(plan, other, 1)
    expect(r.comparison.missing_legs.map((m) => m.leg)).toEqual([leg.leg])
    expect(r.comparison.input_errors).toContainEqual({
      file: `${leg.artifact}-a1/leg.json`,
      line: null,
      message: 'its leg.json states run "local-20261205T000000Z", not one of this workflow run 777: refused',
    })
  })

  it('a forged -a2 in attempt 1 is from the future: refused, the tie stands', async () => {
    const { plan, dir, loss, leg } = await tieAndForgery()
    upload(loss, dir, leg.artifact, `${leg.artifact}-a2`, '777-2')
    const r = await aggregateAt(plan, dir, 1)
    expect(r.comparison.comparisons[0]!.outcome).toMatchObject({
      n: 4,
      both: 4,
      baseline_only: 0,
      diff_pp: 0,
    })
    expect(r.comparison.input_errors).toContainEqual({
      file: `${leg.artifact}-a2`,
      line: null,
      message: 'uploaded for run attempt 2, after the current attempt 1: refused',
    })
    expect(r.comparison.reuploads ?? []).toEqual([])
  })

  it('an -a2 whose leg.json states another attempt is refused, the tie stands', async () => {
    const { plan, dir, loss, leg } = await tieAndForgery()
    upload(loss, dir, leg.artifact, `${leg.artifact}-a2`, '777-1')
    const r = await aggregateAt(plan, dir, 2)
    expect(r.comparison.comparisons[0]!.outcome).toMatchObject({ n: 4, both: 4, diff_pp: 0 })
    expect(r.comparison.input_errors).toContainEqual({
      file: `${leg.artifact}-a2/leg.json`,
      line: null,
      message: 'the artifact is named for run attempt 2, its leg.json states run attempt 1: refused',
    })
  })

  it('a genuine re-upload of attempt 2 is read, and listed as an evaluation-health warning', async () => {
    const { plan, dir, loss, leg } = await tieAndForgery()
    upload(loss, dir, leg.artifact, `${leg.artifact}-a2`, '777-2')
    // an unnumbered copy (e.g. a manual re-download) is never read
    cpSync(path.join(dir, `${leg.artifact}-a1`), path.join(dir, `${leg.artifact}-rerun`), { recursive: true })
    const r = await aggregateAt(plan, dir, 2)
    expect(r.comparison.comparisons[0]!.outcome).toMatchObject({ n: 4, both: 0, baseline_only: 4 })
    expect(r.comparison.reuploads).toEqual([
      { leg: leg.leg, read: `${leg.artifact}-a2`, run_attempt: 2, replaces: [`${leg.artifact}-a1`] },
    ])
    const health = decide(plan, r.comparison).health.filter((x) => x.code === 'leg_reuploaded')
    expect(health).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: `leg ${leg.leg}: read ${leg.artifact}-a2 (run attempt 2) in place of ${leg.artifact}-a1`,
      }),
    ])
    expect(aggregationFailure(r.comparison)).toBeNull()
  })
})

describe('kind 3/6: infrastructure-only problems are an evaluation-health notice, never a regression issue', () => {
  it('a dead cell gives a notice labelled evaluation-health; a clean run gives nothing', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(6) } })
    const atts = pairedOutcomes(plan, { both: 6, bOnly: 0, cOnly: 0, neither: 0 })
    const clean = noticeKind(decide(plan, await run(plan, atts)))
    expect(clean).toEqual({ kind: null, labels: [], problems: [] })
    for (const a of atts) {
      if (a.cell_id !== 'b') continue
      a.outcome = 'unresolved'
      a.verifier = { ...a.verifier, status: 'fail' }
      a.exit = { class: 'error', code: 1, signal: null, reason: 'startup: quota exceeded' }
      a.deliverable = { bytes: 0, sha256: null, files_changed: 0 }
      a.telemetry = { ...a.telemetry, rows: 0, proxy_requests: 0, coverage: 'missing', spend_usd: null }
    }
    const d = decide(plan, await run(plan, atts))
    expect(d.signals).toEqual([])
    const n = noticeKind(d)
    expect(n.kind).toBe('evaluation_health')
    expect(n.labels).toEqual(['harness-watch', 'evaluation-health'])
    expect(n.problems).toEqual([
      'harness_startup_failure: cell b (opencode) failed on every instance (error ×6) and resolved none: an evaluation failure, not a result',
      'coverage_low: 0 of 6 blocks complete (0%) is below min_coverage 80%: inconclusive (incomplete: infra_error ×6, telemetry_missing ×6)',
    ])
  })
})
