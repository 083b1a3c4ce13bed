import { mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { z } from 'zod'
import { withPreviousCapabilities } from '../capability/since-previous.js'
import { confirm } from '../detect/confirm.js'
import { buildConfirmationPlan, confirmationSampleSeed, selectConfirmation } from '../detect/confirm-plan.js'
import { type ComparisonRef, detect } from '../detect/decide.js'
import { DEFAULT_DESIGN } from '../detect/designs/registry.js'
import { evidenceFor } from '../detect/evidence.js'
import { comparisonKey } from '../detect/keys.js'
import { competitivePairs, selfPairs } from '../detect/pairs.js'
import {
  CONFIRMATION_SCHEMA_VERSION,
  type ConfirmationSidecar,
  ConfirmationSidecarSchema,
  DECISION_SCHEMA_VERSION,
  type Decision,
  DecisionSchema,
} from '../detect/schema.js'
import { ManifestSchema } from '../manifest/schema.js'
import { type Plan, PlanSchema } from '../plan/schema.js'
import { type Comparison, ComparisonSchema } from '../records/comparison.js'
import { type HistorySource, type ReportFiles, writeReportFiles } from '../report/write.js'
import { HwError } from '../util/errors.js'
import { sha256, strictJson } from '../util/json.js'
import { describeJsonError } from '../util/json-text.js'
import { quotePath } from '../util/paths.js'
import { sourceLocator } from '../util/source-locate.js'
import { issueLine } from '../util/zod-message.js'

export const DECISION_FILE = 'decision.json'

/**
 * The previous run's decision.json (beside its comparison.json), whose evidence this run extends;
 * null without a previous run, when it cannot be compared with this one, or when it is unreadable
 * (then a note says the evidence starts over).
 */
async function previousDecision(
  previous: string | undefined,
  d: Decision,
  previousComparison: Comparison | undefined,
): Promise<Decision | null> {
  if (!previous) return null
  if (d.health.some((h) => h.code === 'previous_not_comparable')) return null
  const file = path.join(path.dirname(previous), DECISION_FILE)
  try {
    const prev = DecisionSchema.parse(JSON.parse(await readFile(file, 'utf8')))
    // A record that counts a run twice would inflate the evidence: it is not extended.
    for (const ev of prev.evidence ?? []) {
      const ids = new Set<string>()
      for (const r of ev.runs) {
        if (ids.has(r.run_id)) throw new Error(`run ${quoted(r.run_id)} appears twice in ${quoted(ev.key)}`)
        ids.add(r.run_id)
      }
    }
    if (previousComparison) checkOwnRun(prev, previousComparison)
    return prev
  } catch (e) {
    const why = unreadableReason(e)
    d.notes.push(
      `no readable ${DECISION_FILE} beside the previous run's comparison (${why}): the evidence so far starts with this run`,
    )
    return null
  }
}
/**
 * The previous decision must belong to the comparison beside it: same run id, and its evidence for
 * that run must hold the comparison's own discordant counts (b = losses, c = wins) and blocks (n). Throws an Error
 * naming the first mismatch. Earlier runs cannot be checked here (their comparisons are not given).
 */
function checkOwnRun(prev: Decision, cmp: Comparison): void {
  if (prev.run_id !== cmp.run_id)
    throw new Error(`it is of run ${quoted(prev.run_id)}, the comparison of run ${quoted(cmp.run_id)}`)
  if (cmp.run_id === null) return
  for (const ev of prev.evidence ?? []) {
    const e = cmp.comparisons.find(
      (x) => comparisonKey(cmp.experiment_id, x.baseline, x.treatment) === ev.key,
    )
    const own = ev.runs.find((r) => r.run_id === cmp.run_id)
    if (!e || !own) continue
    if (own.b !== e.outcome.losses || own.c !== e.outcome.wins)
      throw new Error(
        `its ${ev.key} counts for run ${quoted(cmp.run_id)} (b = ${own.b}, c = ${own.c}) are not the comparison's (b = ${e.outcome.losses}, c = ${e.outcome.wins})`,
      )
    if (own.blocks !== undefined && own.blocks !== e.outcome.n)
      throw new Error(
        `its ${ev.key} blocks for run ${quoted(cmp.run_id)} (${own.blocks}) are not the comparison's (${e.outcome.n})`,
      )
  }
}

/** An id read from a previous record, quoted for a note and cut at 80 characters. */
function quoted(id: string | null): string {
  if (id === null) return 'null'
  return JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id)
}

/** Why a previous decision.json is not extended: "missing", "not JSON" or its first schema problem. */
function unreadableReason(e: unknown): string {
  if ((e as { code?: unknown }).code === 'ENOENT') return 'missing'
  if (e instanceof SyntaxError) return 'not JSON'
  const issues = (e as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues
  if (Array.isArray(issues) && issues[0])
    return `not a ${DECISION_FILE}: ${issues[0].path.map(String).join('.') || '(root)'}: ${issues[0].message}`
  return e instanceof Error ? e.message : String(e)
}

export const SIDECAR_FILE = 'confirmation.json'

export interface DetectStepOptions {
  /** comparison.json of this round. */
  comparison: string
  /** plan.json of this round: the first run's plan, or a confirmation plan (kind: confirmation). */
  plan: string
  /** comparison.json of an earlier run of the same experiment (self-regression check; first runs only). */
  previous?: string
  /** Where decision.json (and a confirmation plan) go; default: the folder of `comparison`. */
  out?: string
  /** The experiment's weekly history page, linked from the reports written again; absent: none. */
  history?: HistorySource | null
}

/** Action outputs of the detection step (names as in action.yml). */
export interface DetectOutputs {
  breach: 'true' | 'false'
  'confirm-matrix': string
  'confirm-plan-path': string
  confirmed: 'true' | 'false'
}

export interface DetectStepResult {
  decision: Decision
  decisionPath: string
  confirmPlan: Plan | null
  confirmPlanPath: string | null
  outputs: DetectOutputs
  /** report.md and report.html re-rendered beside decision.json with the "Decision" section. */
  reports: ReportFiles
}

/**
 * The detection stage as one call, for `aggregate` (CLI and action) and `harness-watch detect`:
 *  - a first-run plan: decide (detect), write decision.json; on a breach with confirmation enabled,
 *    also write the rerun plan `confirm-<round>/plan.json` and `confirm-<round>/confirmation.json`
 *    (which points back to this decision) and return its matrix;
 *  - a confirmation plan: read confirmation.json beside it, load the first run's decision and
 *    comparison (and the previous run, for self signals), decide on the rerun, write decision.json.
 * Then report.md and report.html are written again beside decision.json with a "Decision" section
 * (the status, each signal with its effect and interval, health problems, the planned rerun); after
 * a confirmation round the first run's report, beside its decision.json, is rewritten to point to
 * the rerun's report, which holds the final decision.
 * Throws HwError `detect_input_invalid` for unreadable or invalid inputs, `detect_input_mismatch` when
 * the plan and the comparison are of different experiments, manifest versions or rounds.
 */
export async function detectStep(opts: DetectStepOptions): Promise<DetectStepResult> {
  const plan = await readJson(opts.plan, PlanSchema, 'plan.json')
  const out = path.resolve(opts.out ?? path.dirname(opts.comparison))
  await mkdir(out, { recursive: true })
  const current = await loadRef(opts.comparison, out)
  checkSameExperiment(plan, current.comparison, opts)
  if (plan.kind === 'confirmation') return confirmStep(opts.plan, current, out, opts.history)

  const manifest = ManifestSchema.parse(plan.manifest)
  // A previous run's report that is not there (first run, expired artifact, another manifest) is a
  // note in the report, never a failed run; one that is there but unreadable is still an error.
  const previousMissing = opts.previous ? !(await stat(opts.previous).catch(() => null)) : false
  const previous = opts.previous && !previousMissing ? await loadRef(opts.previous, out) : undefined
  const decision = detect({
    current,
    previous,
    policy: {
      thresholds: manifest.thresholds,
      confirmation: manifest.confirmation,
      reporting: manifest.reporting,
    },
    quarantine: plan.panel.quarantine,
  })
  decision.evidence = evidenceFor(
    current.comparison,
    await previousDecision(opts.previous, decision, previous?.comparison),
    manifest.confirmation.alpha,
    manifest.thresholds.resolved_deficit_pp,
  )
  let confirmPlan: Plan | null = null
  let confirmPlanPath: string | null = null
  if (decision.status === 'breach' && manifest.confirmation.enabled) {
    const round = plan.round + 1
    const rerunTrials = manifest.confirmation.trials ?? DEFAULT_DESIGN.trials
    const selection = selectConfirmation(decision, manifest.confirmation.max_blocks, {
      pairs: (s) =>
        s.kind === 'self'
          ? previous
            ? selfPairs(previous.comparison, current.comparison, s.treatment)
            : []
          : competitivePairs(current.comparison, s.baseline, s.treatment),
      seed: confirmationSampleSeed(plan.seed, round),
      trials: rerunTrials,
    })
    if (selection.instances.length > 0) {
      confirmPlan = buildConfirmationPlan(plan, selection, round)
      const dir = path.join(out, `confirm-${round}`)
      await mkdir(dir, { recursive: true })
      confirmPlanPath = path.join(dir, 'plan.json')
      await writeFile(confirmPlanPath, strictJson(confirmPlan))
      const sidecar: ConfirmationSidecar = {
        schema_version: CONFIRMATION_SCHEMA_VERSION,
        round,
        decision: path.relative(dir, path.join(out, DECISION_FILE)),
        signals: selection.signals,
      }
      await writeFile(path.join(dir, SIDECAR_FILE), strictJson(sidecar))
      decision.affected_blocks = confirmPlan.panel.instances
      decision.confirmation = {
        round,
        plan: path.relative(out, confirmPlanPath),
        seed: confirmPlan.seed,
        cells: confirmPlan.cells.map((c) => c.id),
        instances: confirmPlan.panel.instances,
        legs: confirmPlan.legs.length,
        capped: selection.capped,
        sample: selection.sample.filter((i) => confirmPlan?.panel.instances.includes(i)),
        estimate: selection.estimate.filter((i) => confirmPlan?.panel.instances.includes(i)),
        design: {
          name: DEFAULT_DESIGN.name,
          version: DEFAULT_DESIGN.version,
          alpha: manifest.confirmation.alpha,
          statement: DEFAULT_DESIGN.statement(manifest.confirmation.alpha),
        },
      }
      // The ratio test needs three blocks in each stage (a skewness correction): a smaller decision
      // part cannot confirm a cost signal, whatever the first run showed.
      const decisionBlocks = selection.sample.filter((i) => !selection.estimate.includes(i)).length
      const splitTrials = DEFAULT_DESIGN.splitTrials === true && rerunTrials >= 2
      if (decisionBlocks < 3 && selection.signals.some((id) => !id.endsWith(':resolved'))) {
        decision.notes.push(
          `the rerun's decision ${splitTrials ? 'trials cover' : 'half holds'} ${decisionBlocks} block(s): a cost signal needs at least 3 to be confirmed; ` +
            `raise confirmation.max_blocks to ${splitTrials ? 3 : 6} or more`,
        )
      }
      if (DEFAULT_DESIGN.splitTrials && rerunTrials < 2) {
        decision.notes.push(
          `confirmation.trials is ${confirmPlan.trials}: no rerun trial can be held out of the decision, so the sample is split into a decision half and an estimation half instead (fewer blocks decide); set confirmation.trials to 2 or more (default ${DEFAULT_DESIGN.trials})`,
        )
      }
      if (selection.capped) {
        decision.notes.push(
          `more blocks were affected than confirmation.max_blocks (${manifest.confirmation.max_blocks}); ` +
            'the rerun decides on the blocks it holds',
        )
      }
    }
  }
  if (previousMissing) {
    decision.notes.push(
      `no report of a previous run was found (${opts.previous}): no cell was compared with its own past this time`,
    )
  }
  const decisionPath = path.join(out, DECISION_FILE)
  await writeFile(decisionPath, strictJson(DecisionSchema.parse(decision)))
  // The report was written before anything was decided: write it again with the decision in it.
  const shown = withPreviousCapabilities(current.comparison, previous?.comparison)
  const reports = await writeReportFiles(shown, out, { decision }, undefined, opts.history)
  return {
    decision,
    decisionPath,
    confirmPlan,
    confirmPlanPath,
    reports,
    outputs: {
      breach: decision.status === 'breach' ? 'true' : 'false',
      'confirm-matrix': JSON.stringify(confirmPlan?.matrix ?? { include: [] }),
      'confirm-plan-path': confirmPlanPath ? portable(confirmPlanPath) : '',
      confirmed: 'false',
    },
  }
}

async function confirmStep(
  planPath: string,
  rerun: ComparisonRef,
  out: string,
  history?: HistorySource | null,
): Promise<DetectStepResult> {
  const planDir = path.dirname(path.resolve(planPath))
  const sidecarPath = path.join(planDir, SIDECAR_FILE)
  const sidecar = await readJson(sidecarPath, ConfirmationSidecarSchema, SIDECAR_FILE)
  const originalDecisionPath = path.resolve(planDir, sidecar.decision)
  const original = await readJson(
    originalDecisionPath,
    DecisionSchema,
    'the first run decision.json',
    DECISION_SCHEMA_VERSION,
  )
  const originalDir = path.dirname(originalDecisionPath)
  const firstRun = original.runs[0]
  if (!firstRun) throw new HwError('detect_input_invalid', 'the first run decision.json lists no run')
  const originalRef = await loadRef(path.resolve(originalDir, firstRun.comparison), out)
  if (originalRef.sha256 !== firstRun.comparison_sha256) {
    throw new HwError('detect_input_invalid', 'the first run comparison.json changed since it was decided', {
      where: originalRef.path,
      help: 'confirm against the same comparison.json the first decision was made from',
    })
  }
  const previous = original.previous
    ? (await loadRef(path.resolve(originalDir, original.previous.comparison), out)).comparison
    : undefined
  if (rerun.comparison.experiment_id !== original.experiment_id) {
    throw new HwError(
      'detect_input_invalid',
      `the rerun is of experiment ${rerun.comparison.experiment_id}, the first run of ${original.experiment_id}`,
    )
  }
  const decision = confirm({
    original,
    originalComparison: originalRef.comparison,
    previous,
    rerun,
    originalRef,
  })
  const decisionPath = path.join(out, DECISION_FILE)
  await writeFile(decisionPath, strictJson(DecisionSchema.parse(decision)))
  // The rerun's report states the final decision; the first run's report (beside its decision.json)
  // is written again pointing to it.
  const firstReport = path.join(originalDir, 'report.md')
  const reports = await writeReportFiles(
    rerun.comparison,
    out,
    { decision, firstRunReport: relativeLink(out, firstReport) },
    undefined,
    history,
  )
  await writeReportFiles(
    originalRef.comparison,
    originalDir,
    {
      decision: original,
      confirmedBy: {
        round: decision.round,
        status: decision.status,
        report: relativeLink(originalDir, reports.reportPath),
      },
    },
    undefined,
    history,
  )
  return {
    decision,
    decisionPath,
    confirmPlan: null,
    confirmPlanPath: null,
    reports,
    outputs: {
      breach: 'false',
      'confirm-matrix': JSON.stringify({ include: [] }),
      'confirm-plan-path': '',
      confirmed: decision.status === 'confirmed' ? 'true' : 'false',
    },
  }
}

/**
 * The plan and the comparison must be of one experiment, one manifest version and one round:
 * otherwise the decision would apply one experiment's thresholds (and cells) to another's results.
 * Throws HwError `detect_input_mismatch` naming both.
 */
function checkSameExperiment(plan: Plan, c: Comparison, files: { plan: string; comparison: string }): void {
  const short = (sha: string | null) => (sha ? `${sha.slice(0, 12)}…` : 'none')
  const help = 'pass the plan.json the comparison was aggregated from (the same experiment and round)'
  if (c.kind === 'published') {
    throw new HwError(
      'detect_input_mismatch',
      `comparison.json compares published results (${c.experiment_id}); detect decides on a comparison aggregated from a plan`,
      { where: files.comparison, help: 'run `harness-watch aggregate --plan <plan.json>` first' },
    )
  }
  if (plan.experiment_id !== c.experiment_id) {
    throw new HwError(
      'detect_input_mismatch',
      'plan.json and comparison.json belong to different experiments',
      {
        where: files.plan,
        details: [
          `plan:       experiment ${plan.experiment_id}, manifest sha256 ${short(plan.manifest_sha256)} (${files.plan})`,
          `comparison: experiment ${c.experiment_id}, manifest sha256 ${short(c.stamp.manifest_sha256)} (${files.comparison})`,
        ],
        help,
      },
    )
  }
  if (c.stamp.manifest_sha256 !== null && c.stamp.manifest_sha256 !== plan.manifest_sha256) {
    throw new HwError(
      'detect_input_mismatch',
      `plan.json and comparison.json are of experiment ${plan.experiment_id} but of different manifest versions`,
      {
        where: files.plan,
        details: [
          `plan:       manifest sha256 ${short(plan.manifest_sha256)} (${files.plan})`,
          `comparison: manifest sha256 ${short(c.stamp.manifest_sha256)} (${files.comparison})`,
        ],
        help,
      },
    )
  }
  if (plan.round !== c.round) {
    throw new HwError(
      'detect_input_mismatch',
      `plan.json is round ${plan.round} (${plan.kind}) of experiment ${plan.experiment_id}, comparison.json round ${c.round}`,
      { where: files.plan, help },
    )
  }
}

/** `to` relative to the folder `from`, with "/" separators (a link inside a report). */
function relativeLink(from: string, to: string): string {
  return path.relative(from, to).split(path.sep).join('/')
}

/**
 * A path as later jobs can use it: relative to the working directory (the workspace, where artifacts
 * are downloaded back to the same relative place), absolute only when it lies outside.
 */
function portable(p: string): string {
  const rel = path.relative(process.cwd(), p)
  return rel.startsWith('..') || path.isAbsolute(rel) ? p : rel
}

/** Read a comparison.json and describe it relative to the folder decision.json goes in. */
export async function loadRef(file: string, decisionDir: string): Promise<ComparisonRef> {
  const text = await readText(file, 'comparison.json')
  const comparison: Comparison = parse(text, file, ComparisonSchema, 'comparison.json')
  return {
    comparison,
    path: path.relative(decisionDir, path.resolve(file)) || 'comparison.json',
    sha256: sha256(text),
  }
}

/** Read decision.json beside a comparison.json (or at the path given). */
export async function readDecision(fileOrDir: string): Promise<{ decision: Decision; path: string }> {
  let p = fileOrDir.endsWith('.json') ? fileOrDir : path.join(fileOrDir, DECISION_FILE)
  if (p.endsWith('comparison.json')) p = path.join(path.dirname(p), DECISION_FILE)
  else if (p === fileOrDir && !fileOrDir.endsWith(DECISION_FILE)) {
    // Another name: a comparison.json under another name stands for the decision.json beside it.
    const value = jsonOf(await readText(p, 'the decision or comparison file'), p, DECISION_FILE)
    const isComparison =
      value !== null && typeof value === 'object' && 'comparisons' in value && 'stamp' in value
    if (!isComparison) {
      return { decision: validate(value, p, DecisionSchema, DECISION_FILE, DECISION_SCHEMA_VERSION), path: p }
    }
    p = path.join(path.dirname(p), DECISION_FILE)
  }
  return { decision: await readJson(p, DecisionSchema, DECISION_FILE, DECISION_SCHEMA_VERSION), path: p }
}

async function readJson<S extends z.ZodType>(
  file: string,
  schema: S,
  what: string,
  version?: number,
): Promise<z.output<S>> {
  return parse(await readText(file, what), file, schema, what, version)
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError(
      'detect_input_invalid',
      `cannot read ${what}: ${(e as NodeJS.ErrnoException).code ?? e}`,
      {
        where: file,
      },
    )
  }
}

/** Parse and validate a JSON file's text; `version`: the schema_version to insist on by name. */
function parse<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
  what: string,
  version?: number,
): z.output<S> {
  return validate(jsonOf(text, file, what), file, schema, what, version, text)
}

function jsonOf(text: string, file: string, what: string): unknown {
  try {
    return JSON.parse(text)
  } catch (e) {
    const { position, reason } = describeJsonError(text, e)
    throw new HwError('detect_input_invalid', `${what} is not JSON: ${reason}`, {
      where: quotePath(`${file}:${position.line}:${position.col}`),
    })
  }
}

function validate<S extends z.ZodType>(
  value: unknown,
  file: string,
  schema: S,
  what: string,
  version?: number,
  text?: string,
): z.output<S> {
  const found = (value as { schema_version?: unknown } | null)?.schema_version
  if (version !== undefined && typeof found === 'number' && found !== version) {
    throw new HwError(
      'detect_input_invalid',
      `${what} has schema_version ${found}; this version of harness-watch reads ${version}`,
      { where: file, help: 'run `harness-watch detect` again on its comparison.json to write it anew' },
    )
  }
  const r = schema.safeParse(value)
  if (!r.success) {
    const locator = text === undefined ? null : sourceLocator(text)
    throw new HwError('detect_input_invalid', `${what} does not match its schema`, {
      where: file,
      details: r.error.issues.slice(0, 10).map((i) => {
        const at = locator?.(i.path)
        return `${at ? `${quotePath(`${file}:${at.line}:${at.col}`)} ` : ''}${issueLine(i, value)}`
      }),
      help: 'pass a file written by this version of harness-watch',
    })
  }
  return r.data
}
