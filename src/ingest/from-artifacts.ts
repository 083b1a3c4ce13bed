import type { AttemptClass, AttemptInput } from '../classify/classes.js'
import { classifyAttempts } from '../classify/classify.js'
import { classifyOptions } from '../classify/options.js'
import { harnessKey } from '../manifest/models.js'
import { cellRoute, isMultiModel, type Manifest, ManifestSchema, primaryRoute } from '../manifest/schema.js'
import type { Plan } from '../plan/schema.js'
import type { AttemptRecord } from '../records/attempt.js'
import type { BlockReason, BlockReasonCode, EnvironmentStamp } from '../records/comparison.js'
import type { Coverage } from '../records/ledger.js'
import { issuesSummary } from '../util/zod-message.js'
import { attemptKey, type LegArtifact, type ReadArtifacts } from './artifacts.js'
import type { InputError, Numbered } from './jsonl.js'
import type { CellInput, ComparisonInput, FinalOutcome, LegDrift, TrialObservation } from './observations.js'
import { primaryRequests, trialRequests } from './trial-requests.js'

export interface ArtifactOptions {
  /** Bootstrap replicates; default manifest.reporting.bootstrap_resamples (10,000). */
  resamples?: number
  /** Bootstrap seed; default the plan's seed. */
  seed?: number
  level?: number
  /** Where plan.json was read from (named in messages). */
  planFile?: string
  planSha256?: string | null
}

/** How an input error about a duplicate result row begins (F09; aggregationFailure looks for it). */
export const DUPLICATE_ROW = 'duplicate result row'
/** Ends the input-error message of a leg run under another manifest version or cell config. */
export const CONFIG_DRIFT_SUFFIX = 'its blocks are config_drift'

/** Worst first: the coverage of a trial is that of its worst attempt. */
const COVERAGE_RANK: Record<Coverage, number> = { complete: 0, unknown: 1, partial: 2, missing: 3 }

/**
 * Turn the legs of one experiment run into the shared ComparisonInput (pure).
 *
 * Per (cell, instance, trial): the attempt marked `final` gives the outcome (none → `missing_attempt`,
 * two → `duplicate_rows`); every attempt's telemetry and harness time is summed (intent-to-treat).
 * Rows are checked against the plan: another experiment, round, cell, instance or trial → an input
 * error and the row is skipped; a repeated (cell, instance, trial, attempt) keeps the first row and
 * marks the block `duplicate_rows` (never double-counted, F09); config hash, harness or version unlike
 * the plan → `config_drift`; a model unlike the manifest's, or the proxy's model check failing →
 * `model_mismatch`. A budget refusal when the manifest declares no per-attempt limit is the proxy's key
 * budget, i.e. infrastructure (F06): the outcome becomes `infra_error`, never a loss.
 */
export function observationsFromArtifacts(
  plan: Plan,
  read: ReadArtifacts,
  opts: ArtifactOptions = {},
): ComparisonInput {
  const planFile = opts.planFile ?? 'plan.json'
  const inputErrors: InputError[] = [...read.inputErrors]
  const parsedManifest = ManifestSchema.safeParse(plan.manifest)
  const manifest: Manifest | null = parsedManifest.success ? parsedManifest.data : null
  if (!parsedManifest.success) {
    inputErrors.push({
      file: planFile,
      line: null,
      message: `plan.manifest does not validate: ${issuesSummary(parsedManifest.error, plan.manifest)}; the header shows what the plan itself states`,
    })
  }
  const declaredLimits =
    manifest !== null &&
    (manifest.budgets.max_spend_usd !== undefined || manifest.budgets.max_requests !== undefined)

  const cells: CellInput[] = plan.cells.map((c) => ({
    id: c.id,
    role: c.id === plan.baseline ? 'baseline' : plan.treatments.includes(c.id) ? 'treatment' : 'other',
    label: `${c.id} (${c.harness}@${c.version})`,
    harness: c.harness,
    versionDeclared: c.version,
    configHash: c.config_hash,
    api: c.api,
    modelDeclared: routeOf(manifest, c.id)?.id ?? null,
    ...(manifest && isMultiModel(manifest) ? multiModelFields(manifest, c.id) : {}),
    trials: plan.trials,
  }))
  const cellById = new Map(cells.map((c) => [c.id, c]))

  const preReasons: ComparisonInput['preReasons'] = []
  for (const m of read.missingLegs) {
    const leg = plan.legs.find((l) => l.leg === m.leg)
    for (const instance of leg?.instances ?? []) {
      preReasons.push({
        instance,
        reason: {
          code: 'missing_leg',
          cell: m.cell,
          trial: null,
          attempt: null,
          detail: `leg ${m.leg} (artifact ${m.artifact}): ${m.reason}`,
        },
      })
    }
  }

  // A leg whose leg.json names another manifest version or config hash than the plan ran something
  // else: none of its blocks may be compared as if it matched (config_drift), and the header says so.
  const drift = legDrift(plan, read.legs, cellById)
  for (const d of drift) {
    const leg = read.legs.find((l) => l.leg.leg === d.leg)!
    const what = driftText(plan, d)
    inputErrors.push({ file: d.file, line: null, message: `${what}; ${CONFIG_DRIFT_SUFFIX}` })
    for (const instance of leg.leg.instances) {
      preReasons.push({
        instance,
        reason: {
          code: 'config_drift',
          cell: d.cell,
          trial: null,
          attempt: null,
          detail: `${what} (${d.file})`,
        },
      })
    }
  }

  // A row that is JSON but not a valid record still names its block: that block cannot be trusted.
  for (const leg of read.legs) {
    const planned = new Set(leg.leg.instances)
    for (const bad of leg.invalidRows) {
      if (bad.instance === null || !planned.has(bad.instance)) continue
      preReasons.push({
        instance: bad.instance,
        reason: {
          code: 'invalid_rows',
          cell: leg.leg.cell,
          trial: bad.trial,
          attempt: null,
          detail:
            bad.detail ??
            `${leg.attemptsFile}:${bad.line} does not match the attempt schema (see input errors)`,
        },
      })
    }
  }

  const observations: TrialObservation[] = []
  // Grouped by (cell, instance, trial) across legs: overlapping shards put one (cell, instance) in two
  // artifacts. Nested maps rather than joined string keys: this loop sees every attempt row.
  const groups = new Map<string, Map<string, Array<TrialGroup | undefined>>>()
  for (const leg of read.legs) {
    const legInstances = new Set(leg.leg.instances)
    for (const row of leg.attempts) {
      const a = row.value
      const skip = checkRow(a, plan, leg, legInstances)
      if (skip) {
        inputErrors.push({ file: leg.attemptsFile, line: row.line, message: `${skip}; row skipped` })
        continue
      }
      let byInstance = groups.get(a.cell_id)
      if (!byInstance) {
        byInstance = new Map()
        groups.set(a.cell_id, byInstance)
      }
      let trials = byInstance.get(a.instance_id)
      if (!trials) {
        trials = []
        byInstance.set(a.instance_id, trials)
      }
      const group = trials[a.trial]
      if (!group) {
        trials[a.trial] = { leg, rows: [row], files: null, extra: null }
        continue
      }
      const firstAt = group.rows.findIndex((r) => r.value.attempt === a.attempt)
      if (firstAt >= 0) {
        const first = `${fileAt(group, firstAt)}:${group.rows[firstAt]!.line}`
        group.extra ??= []
        group.extra.push({
          code: 'duplicate_rows',
          cell: a.cell_id,
          trial: a.trial,
          attempt: a.attempt,
          detail: `attempt ${a.attempt} appears twice: ${first} and ${leg.attemptsFile}:${row.line} (first kept, never counted twice)`,
        })
        // F09: a duplicate result row fails the aggregation (the report is still written).
        inputErrors.push({
          file: leg.attemptsFile,
          line: row.line,
          message: `${DUPLICATE_ROW}: cell ${a.cell_id}, instance ${a.instance_id}, trial ${a.trial}, attempt ${a.attempt} is already at ${first}; not counted`,
        })
        continue
      }
      if (group.files !== null || leg !== group.leg) {
        // A row from another leg (overlapping shards): each row's file is listed from now on.
        const earlier = group.leg.attemptsFile
        group.files ??= group.rows.map(() => earlier)
        group.files.push(leg.attemptsFile)
      }
      group.rows.push(row)
    }
  }
  inputErrors.push(...shortLegs(plan, read.legs))

  // Classify every kept attempt before any comparison (src/classify): evidence across attempts.
  // Each attempt's key is made once, here, and its class and ledger count then found by the record.
  const classifyInput: AttemptFacts[] = []
  for (const byInstance of groups.values()) {
    for (const trials of byInstance.values()) {
      for (const g of trials) {
        if (!g) continue
        const counted = g.leg.ledgerRows.size > 0
        for (let i = 0; i < g.rows.length; i++) {
          const row = g.rows[i]!
          const a = row.value
          const key = attemptKey(a.cell_id, a.instance_id, a.trial, a.attempt)
          classifyInput.push({
            record: a,
            file: fileAt(g, i),
            line: row.line,
            ledgerRows: counted ? (g.leg.ledgerRows.get(key) ?? 0) : null,
            key,
            cls: undefined,
          })
        }
      }
    }
  }
  const classes = classifyAttempts(classifyInput, classifyOptions(manifest, declaredLimits))
  for (const e of classes.inputErrors) inputErrors.push(e)
  const facts: Facts = new Map()
  for (const a of classifyInput) {
    a.cls = classes.byKey.get(a.key)
    facts.set(a.record, a)
  }
  for (const [cellId, byInstance] of groups) {
    const cell = cellById.get(cellId)
    if (!cell) continue
    for (const trials of byInstance.values()) {
      for (const g of trials) {
        if (g) observations.push(trialObservation(g.rows, cell, g.leg, manifest, facts, g.extra, inputErrors))
      }
    }
  }
  sortObservations(observations)

  const m = manifest
  return {
    kind: 'experiment',
    experimentId: plan.experiment_id,
    runId: firstRunId(read.legs),
    round: plan.round,
    cells,
    baseline: plan.baseline,
    treatments: plan.treatments.filter((t) => cellById.has(t)),
    instances: [...plan.panel.instances],
    quarantine: [...plan.panel.quarantine],
    observations,
    preReasons,
    missingLegs: read.missingLegs,
    inputErrors,
    ...(plan.kind === 'confirmation' && plan.trials >= 2 ? { trialSplit: { seed: plan.seed } } : {}),
    inputs: read.inputs,
    stamp: {
      manifestSha256: plan.manifest_sha256,
      planSha256: opts.planSha256 ?? null,
      model: {
        declared: m ? primaryRoute(m).id : null,
        provider: m ? primaryRoute(m).provider : null,
        api: m ? primaryRoute(m).api : null,
      },
      panel: {
        family: m?.benchmark.family ?? null,
        revision: m?.benchmark.revision ?? null,
        source: m ? `${m.panel.source}${m.panel.name ? `:${m.panel.name}` : ''}` : null,
      },
      verifier: m ? `${m.benchmark.verifier.kind}, timeout ${m.benchmark.verifier.timeout_s} s` : null,
      budgets: m ? budgetsText(m.budgets) : null,
      retries: m
        ? `max ${m.retries.max} on ${m.retries.on.join('/') || 'nothing'}, backoff ${m.retries.backoff_s} s`
        : null,
      telemetrySource: m?.telemetry.source ?? null,
      thresholds: m ? { ...m.thresholds } : null,
      ...isolationStamp(read.legs),
      ...environmentStamp(read.legs),
    },
    options: {
      resamples: opts.resamples ?? m?.reporting.bootstrap_resamples ?? 10_000,
      seed: opts.seed ?? plan.seed,
      level: opts.level ?? 0.95,
      valuePerResolutionUsd: m?.reporting.value_per_resolution_usd ?? null,
      ...(m?.reporting.multiplicity ? { multiplicity: m.reporting.multiplicity } : {}),
    },
    notes: [...runIdNote(read.legs), ...(read.replaced ?? []), ...requestCountNote(m, observations)],
    reuploads: read.reuploads ?? [],
    drift,
    classFindings: classes.findings,
  }
}

/** How an input error about a leg with fewer rows than planned begins (aggregationFailure names it). */
export const SHORT_LEG = 'short leg'

/**
 * Completeness against the plan: a leg whose attempts.jsonl holds fewer rows than its leg.json says,
 * or fewer final attempts than the plan's instances × trials, is short — an input error naming the
 * leg and the counts, so the aggregation fails loudly instead of deciding on a partial set.
 */
function shortLegs(plan: Plan, legs: LegArtifact[]): InputError[] {
  const out: InputError[] = []
  for (const l of legs) {
    const rows = l.attempts.length + l.invalidRows.length
    const finals = distinctFinalTrials(l.attempts)
    const planned = l.leg.instances.length * plan.trials
    const said = l.record?.attempts ?? null
    const parts: string[] = []
    if (said !== null && rows < said) parts.push(`attempts.jsonl holds ${rows} rows, leg.json says ${said}`)
    if (finals < planned)
      parts.push(
        `${finals} of ${planned} planned trials (${l.leg.instances.length} instances × ${plan.trials}) have a final attempt`,
      )
    if (parts.length > 0)
      out.push({
        file: l.attemptsFile,
        line: null,
        message: `${SHORT_LEG} ${l.leg.leg}: ${parts.join('; ')}`,
      })
  }
  return out
}

/** How many distinct (instance, trial) pairs have a final attempt among `rows`. */
function distinctFinalTrials(rows: Numbered<AttemptRecord>[]): number {
  const trials = new Map<string, Set<number>>()
  let n = 0
  for (const { value: a } of rows) {
    if (!a.final) continue
    let seen = trials.get(a.instance_id)
    if (!seen) {
      seen = new Set()
      trials.set(a.instance_id, seen)
    }
    if (!seen.has(a.trial)) {
      seen.add(a.trial)
      n++
    }
  }
  return n
}

/** The per-attempt limits in words: "timeout 600 s, $5 spend cap, no request cap (per attempt)". */
export function budgetsText(b: Manifest['budgets']): string {
  const spend = b.max_spend_usd === undefined ? 'no spend cap' : `spend cap $${b.max_spend_usd}`
  const requests = b.max_requests === undefined ? 'no request cap' : `request cap ${b.max_requests}`
  return `per attempt: timeout ${b.timeout_s} s, ${spend}, ${requests}`
}

/**
 * Legs whose leg.json states another manifest version (manifest_sha256) or another config hash for
 * its cell than the plan; sorted by leg. A leg without leg.json cannot be checked here (the attempt
 * rows' own config hashes still are).
 */
function legDrift(plan: Plan, legs: LegArtifact[], cells: Map<string, CellInput>): LegDrift[] {
  const out: LegDrift[] = []
  for (const l of legs) {
    const r = l.record
    if (!r) continue
    const planned = cells.get(l.leg.cell)?.configHash ?? null
    const manifestOff = r.manifest_sha256 !== plan.manifest_sha256
    const configOff = planned !== null && r.config_hash !== planned
    if (!manifestOff && !configOff) continue
    out.push({
      leg: l.leg.leg,
      cell: l.leg.cell,
      file: `${l.folder}/leg.json`,
      manifest_sha256: manifestOff ? r.manifest_sha256 : null,
      config_hash: configOff ? r.config_hash : null,
    })
  }
  return out.sort((a, b) => cmp(a.leg, b.leg))
}

function driftText(plan: Plan, d: LegDrift): string {
  const parts: string[] = []
  if (d.manifest_sha256 !== null) {
    parts.push(
      `ran under manifest sha256 ${short(d.manifest_sha256)}… while the plan says ${short(plan.manifest_sha256)}…`,
    )
  }
  if (d.config_hash !== null) {
    const planned = plan.cells.find((c) => c.id === d.cell)?.config_hash ?? ''
    parts.push(
      `ran cell ${d.cell} with config hash ${short(d.config_hash)}… while the plan says ${short(planned)}…`,
    )
  }
  return `leg ${d.leg} ${parts.join(' and ')}`
}

/** A kept attempt as classified: its key, ledger row count (null: no ledger read) and class. */
interface AttemptFacts extends AttemptInput {
  key: string
  cls: AttemptClass | undefined
}

/** Every kept attempt's facts, by its record. */
type Facts = Map<AttemptRecord, AttemptFacts>

/**
 * The attempts of one (cell, instance, trial), first seen in `leg`; `files[i]` holds `rows[i]` (null:
 * every row is from `leg`).
 */
interface TrialGroup {
  leg: LegArtifact
  rows: Numbered<AttemptRecord>[]
  files: string[] | null
  /** Reasons found while grouping (repeated attempts); null when none. */
  extra: BlockReason[] | null
}

/** The attempts.jsonl of the group's row i. */
function fileAt(g: TrialGroup, i: number): string {
  return g.files === null ? g.leg.attemptsFile : g.files[i]!
}

/** In place, by (instance, cell, trial): string order ranked once, then numeric comparisons. */
function sortObservations(observations: TrialObservation[]): void {
  const rank = (values: Iterable<string>) => new Map([...new Set(values)].sort(cmp).map((v, i) => [v, i]))
  const instances = rank(observations.map((o) => o.instance))
  const cells = rank(observations.map((o) => o.cell))
  const key = (o: TrialObservation) =>
    (instances.get(o.instance)! * cells.size + cells.get(o.cell)!) * 2 ** 20 + o.trial
  const keyed = observations.map((o) => ({ o, k: key(o) }))
  keyed.sort((x, y) => x.k - y.k)
  for (let i = 0; i < keyed.length; i++) observations[i] = keyed[i]!.o
}

/** The sandbox backends of the legs (leg.json `isolation`, `canary`), counted; nothing for older legs. */
function isolationStamp(legs: LegArtifact[]): {
  isolation?: Array<{ backend: string; canary: string | null; legs: number }>
} {
  const seen = new Map<string, { backend: string; canary: string | null; legs: number }>()
  for (const l of legs) {
    const r = l.record
    if (!r?.isolation) continue
    const key = `${r.isolation}\u0000${r.canary ?? ''}`
    const row = seen.get(key) ?? { backend: r.isolation, canary: r.canary ?? null, legs: 0 }
    row.legs++
    seen.set(key, row)
  }
  if (seen.size === 0) return {}
  return { isolation: [...seen.values()].sort((a, b) => a.backend.localeCompare(b.backend)) }
}

/**
 * The container environments of the final attempts (image, resources, network per phase, where the
 * verifier ran), one row per distinct combination with its attempt count, most used first; nothing
 * when no attempt ran in a container.
 */
export function environmentStamp(legs: LegArtifact[]): { environments?: EnvironmentStamp[] } {
  const seen = new Map<string, EnvironmentStamp>()
  for (const l of legs) {
    for (const { value: a } of l.attempts) {
      const env = a.environment
      if (!a.final || !env) continue
      const row: EnvironmentStamp = {
        runtime: `${env.runtime} ${env.runtime_version}`,
        image_ref: env.image_ref,
        image_id: env.image_id,
        resources: { ...env.resources, storage_enforced: env.storage_enforced ?? null },
        network: { agent: env.network.agent, verifier: env.network.verifier },
        verifier_container: env.verifier_container ?? null,
        attempts: 0,
      }
      const key = JSON.stringify({ ...row, attempts: 0 })
      const have = seen.get(key) ?? row
      have.attempts++
      seen.set(key, have)
    }
  }
  if (seen.size === 0) return {}
  const rows = [...seen.values()].sort(
    (a, b) => b.attempts - a.attempts || (a.image_ref < b.image_ref ? -1 : a.image_ref > b.image_ref ? 1 : 0),
  )
  return { environments: rows }
}

/** Legs from more than one run (e.g. a leg re-run by hand) are aggregated together: say so. */
function runIdNote(legs: LegArtifact[]): string[] {
  const ids = new Set<string>()
  for (const l of legs) {
    if (l.record) ids.add(l.record.run_id)
    let last: string | null = null
    for (const a of l.attempts) {
      if (a.value.run_id === last) continue
      last = a.value.run_id
      ids.add(last)
    }
  }
  return ids.size > 1 ? [`the legs come from ${ids.size} runs: ${[...ids].sort().join(', ')}`] : []
}

/** Why a row does not belong to this leg of this plan, or null when it does. */
function checkRow(a: AttemptRecord, plan: Plan, leg: LegArtifact, legInstances: Set<string>): string | null {
  if (a.experiment_id !== plan.experiment_id)
    return `experiment ${a.experiment_id}, the plan is ${plan.experiment_id}`
  if (a.round !== plan.round) return `round ${a.round}, the plan is round ${plan.round}`
  if (a.cell_id !== leg.leg.cell)
    return `cell ${a.cell_id} in the artifact of leg ${leg.leg.leg} (cell ${leg.leg.cell})`
  if (!legInstances.has(a.instance_id))
    return `instance ${a.instance_id} is not planned for leg ${leg.leg.leg}`
  if (a.trial >= plan.trials) return `trial ${a.trial}, the plan has ${plan.trials} trial(s)`
  return null
}

/** The note of a primary-only request count: what it counts, and the trials it could not count. */
function requestCountNote(m: Manifest | null, observations: readonly TrialObservation[]): string[] {
  if (m?.request_count !== 'primary') return []
  const unroled = observations.filter((o) => o.requests?.roles === null).length
  return [
    `proxy requests count primary requests only (manifest request_count: primary): title, summary, compaction, subagent, retry, fallback and unclassified requests are left out of the request metric and its rule${unroled > 0 ? `; ${unroled} trial(s) recorded no request roles, so their request figures are not stated` : ''}`,
  ]
}

function trialObservation(
  rows: Numbered<AttemptRecord>[],
  cell: CellInput,
  leg: LegArtifact,
  manifest: Manifest | null,
  facts: Facts,
  carried: BlockReason[] | null,
  inputErrors: InputError[],
): TrialObservation {
  // Called once per trial (25,000 times in a large run): no closure is made per call.
  rows.sort(byAttempt)
  const first = rows[0]!.value
  const reasons = new TrialReasons(cell.id, first.trial, carried)

  const finals: Numbered<AttemptRecord>[] = []
  for (const r of rows) if (r.value.final) finals.push(r)
  const last = rows[rows.length - 1]!
  let finalRow = finals[finals.length - 1] ?? last
  if (finals.length === 0) {
    reasons.add(
      'missing_attempt',
      null,
      `no final attempt (last seen: attempt ${last.value.attempt}, ${leg.attemptsFile}:${last.line})`,
    )
    finalRow = last
  } else if (finals.length > 1) {
    const where = finals.map((f) => `${leg.attemptsFile}:${f.line}`).join(', ')
    reasons.add('duplicate_rows', null, `${finals.length} attempts marked final: ${where}`)
    // F09: two result rows for one trial fail the aggregation unless a policy says which counts.
    inputErrors.push({
      file: leg.attemptsFile,
      line: finals[finals.length - 1]!.line,
      message: `${DUPLICATE_ROW}: cell ${cell.id}, instance ${first.instance_id}, trial ${first.trial} has ${finals.length} attempts marked final (${where}); the last is used`,
    })
  }
  const fin = finalRow.value
  const finClass = facts.get(fin)?.cls
  let outcome: FinalOutcome = fin.outcome
  if (finClass) {
    // The classifier decides: agent outcomes count, every other class is kept out of the outcome
    // statistics with its class and reason (never a harness loss).
    const c = finClass.outcome_class
    if (c === 'resolved' || c === 'unresolved') outcome = c
    else if (c === 'contradictory') {
      outcome = 'ungraded'
      reasons.add('invalid_rows', fin.attempt, `${leg.attemptsFile}:${finalRow.line}: ${finClass.reason}`)
    } else if (finClass.group === 'grading') {
      outcome = 'ungraded'
      reasons.add('ungraded', fin.attempt, `final attempt: ${c} (${finClass.reason})`)
    } else {
      outcome = 'infra_error'
      reasons.add('infra_error', fin.attempt, `final attempt: ${c} (${finClass.reason})`)
    }
  }

  let coverage: Coverage = 'complete'
  let coverageDetail: string | null = null
  const attemptCoverage: Record<Coverage, number> = { complete: 0, partial: 0, missing: 0, unknown: 0 }
  const sums = {
    spend_usd: 0 as number | null,
    proxy_requests: 0 as number | null,
    input_tokens: 0 as number | null,
    input_fresh_tokens: 0 as number | null,
    cache_read_tokens: 0 as number | null,
    cache_write_tokens: 0 as number | null,
    output_tokens: 0 as number | null,
    wall_s: 0 as number | null,
  }
  // Usually one version and one model: small arrays, not Sets, in this per-trial path.
  const versions: string[] = []
  const models: string[] = []
  let startedAt: string | null = null
  let endedAt: string | null = null
  for (const { value: a, line } of rows) {
    const t = a.telemetry
    let cov: Coverage = t.coverage
    let detail = t.reason
    // The ledger count and class the attempt was classified with (its group's leg's ledger).
    const f = facts.get(a)
    const ledgerCount = f ? f.ledgerRows : null
    if (cov === 'complete' && ledgerCount !== null && ledgerCount < t.rows) {
      cov = 'partial'
      detail = `ledger.jsonl holds ${ledgerCount} of the ${t.rows} rows the attempt summary counts`
    }
    const ac = f?.cls
    const anomalous = ac !== undefined && ac.telemetry_class !== 'ok'
    if (ac && anomalous) {
      reasons.add(
        ac.telemetry_class === 'telemetry_suspect' ? 'telemetry_suspect' : 'telemetry_anomaly',
        a.attempt,
        `${ac.anomaly}: ${ac.telemetry_reason}`,
      )
    }
    attemptCoverage[cov]++
    if (COVERAGE_RANK[cov] > COVERAGE_RANK[coverage]) {
      coverage = cov
      coverageDetail = `attempt ${a.attempt}: ${detail ?? cov}`
    }
    // Anomalous or suspect telemetry, and usage cut off mid-answer, state no resource figure: the
    // trial's sums become null (a lower bound with its reason), never a silently summed number.
    const unusable = anomalous || (ac?.partial_usage ?? false)
    sums.spend_usd = addOrNull(sums.spend_usd, unusable ? null : t.spend_usd)
    const counted = manifest?.request_count === 'primary' ? primaryRequests(t) : t.proxy_requests
    sums.proxy_requests = addOrNull(sums.proxy_requests, unusable ? null : counted)
    sums.input_tokens = addOrNull(sums.input_tokens, unusable ? null : t.input_tokens)
    sums.input_fresh_tokens = addOrNull(sums.input_fresh_tokens, unusable ? null : t.input_fresh_tokens)
    sums.cache_read_tokens = addOrNull(sums.cache_read_tokens, unusable ? null : t.cache_read_tokens)
    sums.cache_write_tokens = addOrNull(sums.cache_write_tokens, unusable ? null : t.cache_write_tokens)
    sums.output_tokens = addOrNull(sums.output_tokens, unusable ? null : t.output_tokens)
    sums.wall_s = addOrNull(sums.wall_s, a.phases_ms.harness / 1000)

    if (a.quarantined)
      reasons.add('quarantined', a.attempt, 'the attempt record marks the instance quarantined')
    if (a.config_hash !== cell.configHash) {
      reasons.add(
        'config_drift',
        a.attempt,
        `config hash ${short(a.config_hash)} ≠ planned ${short(cell.configHash ?? '')} (${leg.attemptsFile}:${line})`,
      )
    }
    if (a.harness !== cell.harness)
      reasons.add('config_drift', a.attempt, `harness ${a.harness} ≠ planned ${cell.harness}`)
    if (
      a.harness_version !== null &&
      a.harness_version !== cell.versionDeclared &&
      normVersion(a.harness_version) !== normVersion(cell.versionDeclared ?? '')
    ) {
      reasons.add(
        'config_drift',
        a.attempt,
        `harness version ${a.harness_version} ≠ declared ${cell.versionDeclared}`,
      )
    }
    if (cell.modelDeclared !== null && a.model !== cell.modelDeclared) {
      reasons.add('model_mismatch', a.attempt, `model ${a.model} ≠ declared ${cell.modelDeclared}`)
    }
    if (t.model_mismatch) {
      reasons.add(
        'model_mismatch',
        a.attempt,
        `the upstream answered as ${t.models_observed.join(', ') || 'another model'}`,
      )
    }
    if (a.harness_version && !versions.includes(a.harness_version)) versions.push(a.harness_version)
    for (const mo of t.models_observed) if (!models.includes(mo)) models.push(mo)
    if (startedAt === null || a.started_at < startedAt) startedAt = a.started_at
    if (endedAt === null || a.ended_at > endedAt) endedAt = a.ended_at
  }
  const legVersion = leg.record?.harness_version_observed
  if (legVersion && !versions.includes(legVersion)) versions.push(legVersion)

  return {
    cell: cell.id,
    instance: first.instance_id,
    trial: first.trial,
    outcome,
    exitClass: fin.exit.class,
    attempts: rows.length,
    coverage,
    coverageDetail,
    attemptCoverage,
    metrics: sums,
    requests: trialRequests(rows.map((r) => r.value.telemetry)),
    shape: {
      firstRequestBytes: fin.telemetry.first_request_bytes,
      firstRequestTools: fin.telemetry.first_request_tools,
      auxRequests: fin.telemetry.aux_requests,
    },
    identity: {
      harnessVersion: versions.length > 1 ? (versions.sort()[0] ?? null) : (versions[0] ?? null),
      configHash: fin.config_hash,
      models: models.length > 1 ? models.sort() : models,
      imageId: fin.environment?.image_id ?? null,
    },
    reasons: reasons.list,
    startedAt,
    endedAt,
    classes: attemptClasses(rows, fin, facts),
    tools: sumTools(rows),
    userSimulation: sumUserSimulation(rows),
    atif: atifPaths(leg, rows),
  }
}

function byAttempt(x: Numbered<AttemptRecord>, y: Numbered<AttemptRecord>): number {
  return x.value.attempt - y.value.attempt
}

/** A trial's block reasons (those carried from grouping first), each code once per attempt. */
class TrialReasons {
  readonly list: BlockReason[]
  constructor(
    private readonly cell: string,
    private readonly trial: number,
    carried: BlockReason[] | null,
  ) {
    this.list = carried === null ? [] : [...carried]
  }

  /** Adds a reason, unless one of the same code is already listed for the same attempt. */
  add(code: BlockReasonCode, attempt: number | null, detail: string): void {
    for (const r of this.list) if (r.code === code && r.attempt === attempt) return
    this.list.push({ code, cell: this.cell, trial: this.trial, attempt, detail })
  }
}

/** Each attempt's classes, as the trial observation lists them. */
function attemptClasses(
  rows: Numbered<AttemptRecord>[],
  fin: AttemptRecord,
  facts: Facts,
): TrialObservation['classes'] {
  const out: TrialObservation['classes'] = []
  for (const { value: a } of rows) {
    const c = facts.get(a)?.cls
    out.push({
      attempt: a.attempt,
      final: a === fin,
      outcome_class: c?.outcome_class ?? null,
      reason: c?.reason ?? null,
      telemetry_class: c?.telemetry_class ?? 'ok',
      anomaly: c?.anomaly ?? null,
      partial_usage: c?.partial_usage ?? false,
      non_utf8: a.deliverable.non_utf8 ?? 0,
      raw_spend_usd: c?.ledger.spend_usd ?? a.telemetry.spend_usd,
      dedup_spend_usd: c?.ledger.dedup_spend_usd ?? null,
    })
  }
  return out
}

/** A relative path of plain segments (no `..`, no absolute path, no unusual characters): safe to link. */
const LINKABLE = /^(?!\/)(?:[A-Za-z0-9_+@=-][A-Za-z0-9._+@=-]*)(?:\/[A-Za-z0-9_+@=-][A-Za-z0-9._+@=-]*)*$/

/**
 * The attempts' ATIF files inside the artifact (undefined when none names one); a record whose paths
 * would leave it (`..`, an absolute path, unusual characters) links none.
 */
function atifPaths(leg: LegArtifact, rows: Numbered<AttemptRecord>[]): string[] | undefined {
  let out: string[] | undefined
  for (const { value: a } of rows) {
    if (!a.atif) continue
    const slash = leg.attemptsFile.lastIndexOf('/')
    const legDir = slash < 0 ? '' : leg.attemptsFile.slice(0, slash)
    const prefix = legDir === '' || legDir === '.' ? '' : `${legDir}/`
    const p = `${prefix}${a.logs_dir.replace(/\/+$/, '')}/${a.atif}`
    if (!LINKABLE.test(p) || DOT_SEGMENT.test(p)) continue
    if (out === undefined) out = [p]
    else out.push(p)
  }
  return out
}
const DOT_SEGMENT = /(^|\/)\.\.?(\/|$)/

/** The simulated user's requests and spend over a trial's attempts, or null when none held a dialogue. */
function sumUserSimulation(rows: Numbered<AttemptRecord>[]): TrialObservation['userSimulation'] {
  let dialogues = 0
  let requests = 0
  let spend: number | null = 0
  for (const { value: r } of rows) {
    if (r.dialogue === undefined) continue
    dialogues++
    const u = r.dialogue.user_simulation
    requests += u?.requests ?? 0
    spend = spend === null || u?.spend_usd == null ? null : spend + u.spend_usd
  }
  return dialogues === 0 ? null : { dialogues, requests, spend_usd: spend }
}

function addOrNull(sum: number | null, v: number | null): number | null {
  return sum === null || v === null ? null : sum + v
}

/** `v1.2.3` and `1.2.3` are the same version. */
export function normVersion(v: string): string {
  return v.trim().replace(/^v(?=\d)/i, '')
}

function short(hash: string): string {
  return hash.slice(0, 12)
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function firstRunId(legs: LegArtifact[]): string | null {
  const ids = new Set<string>()
  for (const l of legs) {
    if (l.record) ids.add(l.record.run_id)
    else if (l.attempts[0]) ids.add(l.attempts[0].value.run_id)
  }
  return [...ids].sort()[0] ?? null
}

/** Tool calls summed over a trial's attempts (bridge tasks), or null when no attempt reported them. */
function sumTools(rows: Numbered<AttemptRecord>[]): { calls: number; failed: number } | null {
  let any = false
  let calls = 0
  let failed = 0
  for (const { value: r } of rows) {
    if (r.tools === undefined) continue
    any = true
    calls += r.tools.calls ?? 0
    failed += (r.tools.error ?? 0) + (r.tools.invalid_arguments ?? 0)
  }
  return any ? { calls, failed } : null
}

/** The model route of a planned cell, when the manifest validates and names the cell. */
function routeOf(manifest: Manifest | null, cellId: string) {
  const cell = manifest?.cells.find((c) => c.id === cellId)
  return manifest && cell ? cellRoute(manifest, cell) : null
}

/** A several-model cell's route name and harness configuration key (pairing within a model). */
function multiModelFields(
  manifest: Manifest,
  cellId: string,
): { modelRoute: string | null; harnessKey?: string } {
  const cell = manifest.cells.find((c) => c.id === cellId)
  return cell ? { modelRoute: cell.model ?? null, harnessKey: harnessKey(cell) } : { modelRoute: null }
}
