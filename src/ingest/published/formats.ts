import { z } from 'zod'

/**
 * Per-instance result files that systems publish, reduced to one shape. Three formats:
 * - `swebench-resolved-list`: {system?, harness?, harness_version?, model?, resolved: [ids],
 *   resolved_null?: [ids], cost_usd?: {id: USD | null} | null, api_calls?: {id: n} | null, n_total?}
 *   (SWE-bench leaderboard / experiments exports; an id not in `resolved` is unresolved).
 * - `openhands-instance-results`: {id: {resolved: bool | null, cost: USD | null}} (OpenHands index
 *   `instance_results/<benchmark>.json`; metadata.json two folders up names the agent and model).
 * - `terminal-bench-per-task`: {benchmark?, systems: {name: {tasks: {task: {n_trials, n_success}}}}}
 *   (k trials per task; one system chosen with `file#system`).
 */

export type PublishedFormat =
  | 'swebench-resolved-list'
  | 'openhands-instance-results'
  | 'terminal-bench-per-task'
  | 'harbor-job'

/**
 * Outcome of one published trial; `ungraded` is a null grade in the source, `infra_error` a trial the
 * runner reports as failed to evaluate (Harbor's exception_info): left out of the pairing, counted;
 * `contradictory` a row whose own fields disagree (its `resolved` flag against its verifier's
 * verdict): never a loss.
 */
export type PublishedTrial = 'resolved' | 'unresolved' | 'ungraded' | 'infra_error' | 'contradictory'

export interface PublishedInstance {
  trials: PublishedTrial[]
  costUsd: number | null
  requests: number | null
}

/** One published system's per-instance results. */
export interface PublishedSystem {
  name: string
  format: PublishedFormat
  /** File (and `#system` selector) it came from, as given. */
  source: string
  harness: string
  harnessVersion: string | null
  model: string | null
  benchmark: string | null
  date: string | null
  /** Instances the file names. For the resolved-list format, every id it mentions. */
  instances: Map<string, PublishedInstance>
  /** Panel size the file declares (resolved-list format), if any. */
  declaredTotal: number | null
  /** True when an id absent from the file is unresolved by the format's meaning (resolved lists). */
  absentIsUnresolved: boolean
  /** Where the cost comes from: the publisher's figure, or the harness's own report (Harbor). */
  costSource?: 'published' | 'harness-self-reported'
  notes: string[]
}

/** What a bad value is, in an error message: "missing", "null", "an array", "a string", … */
function got(v: unknown): string {
  if (v === undefined) return 'missing'
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'number' && !Number.isFinite(v)) return `${v} (not a finite number)`
  return typeof v === 'object' ? 'an object' : `a ${typeof v} (${JSON.stringify(v).slice(0, 40)})`
}
/** The fields of a zod issue an error message reads. */
interface NumberIssue {
  input: unknown
  code?: string
  expected?: string
  minimum?: unknown
  inclusive?: boolean
}
/** Why a number of the right type was refused: below the minimum, or not whole. */
function numberRule(i: NumberIssue): string {
  if (typeof i.input !== 'number' || !Number.isFinite(i.input)) return ''
  if (i.code === 'too_small')
    return i.inclusive === false ? `: not above ${i.minimum}` : `: below ${i.minimum}`
  if (i.code === 'invalid_type' && i.expected === 'int') return ': not a whole number'
  return ''
}
const expected = (what: string) => ({
  error: (i: NumberIssue) => `expected ${what}, got ${got(i.input)}${numberRule(i)}`,
})
const instanceIds = z
  .array(z.string(expected('an instance id (a string)')), expected('an array of instance ids'))
  .superRefine((ids, ctx) => {
    // A repeated id is a broken export, never silently folded into one.
    const first = new Map<string, number>()
    ids.forEach((id, i) => {
      const at = first.get(id)
      if (at === undefined) first.set(id, i)
      else
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `duplicate instance id "${id}" (first at [${at}])`,
        })
    })
  })

export const SwebenchResolvedListSchema = z.looseObject({
  system: z.string().nullish(),
  harness: z.string().nullish(),
  harness_name: z.string().nullish(),
  harness_version: z.string().nullish(),
  model: z.string().nullish(),
  date: z.string().nullish(),
  resolved: instanceIds,
  resolved_null: instanceIds.nullish(),
  cost_usd: z
    .record(
      z.string(),
      z.number(expected('a cost in USD (a number) or null')).nonnegative().nullable(),
      expected('an object {instance id: cost in USD}'),
    )
    .nullish(),
  api_calls: z
    .record(
      z.string(),
      z.number(expected('a request count or null')).int().nonnegative().nullable(),
      expected('an object {instance id: request count}'),
    )
    .nullish(),
  n_total: z.number(expected('the panel size (a whole number)')).int().positive().nullish(),
})

export const OpenHandsInstanceResultsSchema = z.record(
  z.string(),
  z.looseObject(
    {
      resolved: z.boolean(expected('true, false or null')).nullable(),
      cost: z.number(expected('a cost in USD (a number) or null')).nonnegative().nullable().optional(),
    },
    expected('an instance record {resolved, cost}'),
  ),
)

export const OpenHandsMetadataSchema = z.looseObject({
  agent_name: z.string().nullish(),
  agent_version: z.string().nullish(),
  model: z.string().nullish(),
  submission_time: z.string().nullish(),
})

export const TerminalBenchSchema = z.looseObject({
  benchmark: z.string().nullish(),
  systems: z.record(
    z.string(),
    z.looseObject({
      tasks: z.record(
        z.string(),
        z.looseObject({ n_trials: z.number().int().positive(), n_success: z.number().int().nonnegative() }),
      ),
    }),
  ),
})

/** Which format a parsed JSON value is, or null. */
export function detectFormat(json: unknown): PublishedFormat | null {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return null
  const o = json as Record<string, unknown>
  const isRecord = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v)
  const isInstanceRecord = (v: unknown) => isRecord(v) && 'resolved' in (v as object)
  // A top-level `resolved` that is not itself an instance record is a resolved list, valid or not:
  // its schema then names what is wrong with it.
  if ('resolved' in o && !isInstanceRecord(o.resolved)) return 'swebench-resolved-list'
  if ('systems' in o && !isInstanceRecord(o.systems)) return 'terminal-bench-per-task'
  const values = Object.values(o)
  if (values.length > 0 && values.some(isInstanceRecord)) return 'openhands-instance-results'
  return null
}

/** Reduce a resolved-list file (already validated). */
export function fromResolvedList(
  v: z.output<typeof SwebenchResolvedListSchema>,
  source: string,
  fallbackName: string,
): PublishedSystem {
  const instances = new Map<string, PublishedInstance>()
  const get = (id: string) => {
    let x = instances.get(id)
    if (!x) {
      x = { trials: ['unresolved'], costUsd: null, requests: null }
      instances.set(id, x)
    }
    return x
  }
  for (const id of Object.keys(v.cost_usd ?? {})) get(id).costUsd = v.cost_usd?.[id] ?? null
  for (const id of Object.keys(v.api_calls ?? {})) get(id).requests = v.api_calls?.[id] ?? null
  for (const id of v.resolved) get(id).trials = ['resolved']
  for (const id of v.resolved_null ?? []) get(id).trials = ['ungraded']
  const notes: string[] = []
  if (!v.cost_usd) notes.push(`${fallbackName}: the file has no per-instance cost`)
  return {
    name: v.system ?? fallbackName,
    format: 'swebench-resolved-list',
    source,
    harness: v.harness ?? v.harness_name ?? fallbackName,
    harnessVersion: v.harness_version ?? null,
    model: v.model ?? null,
    benchmark: null,
    date: v.date ?? null,
    instances,
    declaredTotal: v.n_total ?? null,
    // A per-instance cost for all n_total instances enumerates what the system ran: an id outside it
    // (a typo, another benchmark's id) is not one of its attempts. Otherwise, by the format's meaning,
    // an id not in `resolved` is unresolved.
    absentIsUnresolved: !(
      v.cost_usd &&
      v.n_total !== null &&
      v.n_total !== undefined &&
      Object.keys(v.cost_usd).length === v.n_total
    ),
    notes,
  }
}

/** Reduce an OpenHands `instance_results` file (and its metadata.json, when found). */
export function fromOpenHands(
  v: z.output<typeof OpenHandsInstanceResultsSchema>,
  meta: z.output<typeof OpenHandsMetadataSchema> | null,
  source: string,
  fallbackName: string,
  benchmark: string | null,
): PublishedSystem {
  const instances = new Map<string, PublishedInstance>()
  const contradictions: string[] = []
  for (const [id, r] of Object.entries(v)) {
    const verdict = ownVerdict(r)
    let trial: PublishedTrial = r.resolved === null ? 'ungraded' : r.resolved ? 'resolved' : 'unresolved'
    if (r.resolved !== null && verdict && verdict.pass !== r.resolved) {
      trial = 'contradictory'
      contradictions.push(`${id} (resolved ${r.resolved}, ${verdict.said})`)
    }
    instances.set(id, { trials: [trial], costUsd: r.cost ?? null, requests: null })
  }
  const agent = meta?.agent_name ?? fallbackName
  return {
    name: meta
      ? `${agent}${meta.agent_version ? ` ${meta.agent_version}` : ''}${meta.model ? ` + ${meta.model}` : ''}`
      : fallbackName,
    format: 'openhands-instance-results',
    source,
    harness: agent,
    harnessVersion: meta?.agent_version ?? null,
    model: meta?.model ?? null,
    benchmark,
    date: meta?.submission_time ?? null,
    instances,
    declaredTotal: null,
    absentIsUnresolved: false,
    notes: [
      ...(meta
        ? []
        : [`${fallbackName}: no metadata.json beside instance_results/; harness and model unknown`]),
      ...(contradictions.length > 0
        ? [
            `${contradictions.length} contradictory row(s), their own fields disagree (not counted, never a loss): ${contradictions.slice(0, 10).join('; ')}${contradictions.length > 10 ? '; …' : ''}`,
          ]
        : []),
    ],
  }
}

/** Reduce one system of a Terminal-Bench per-task file: c successes of n trials per task. */
export function fromTerminalBench(
  v: z.output<typeof TerminalBenchSchema>,
  system: string,
  source: string,
): PublishedSystem {
  const s = v.systems[system]
  const instances = new Map<string, PublishedInstance>()
  const notes: string[] = []
  for (const [task, t] of Object.entries(s?.tasks ?? {})) {
    const c = Math.min(t.n_success, t.n_trials)
    if (t.n_success > t.n_trials)
      notes.push(`${system}: task ${task} has n_success ${t.n_success} > n_trials ${t.n_trials}; capped`)
    // Only counts are published, not the order of trials; every rule we apply is order-free.
    const trials: PublishedTrial[] = [
      ...Array<PublishedTrial>(c).fill('resolved'),
      ...Array<PublishedTrial>(t.n_trials - c).fill('unresolved'),
    ]
    instances.set(task, { trials, costUsd: null, requests: null })
  }
  notes.push(`${system}: per-task success counts only (no cost, no trial order)`)
  const [date, ...rest] = system.split('_')
  return {
    name: system,
    format: 'terminal-bench-per-task',
    source,
    harness:
      /^\d{8}$/.test(date ?? '') && rest.length > 0 ? (rest[0] ?? system) : (system.split('__')[0] ?? system),
    harnessVersion: null,
    model:
      /^\d{8}$/.test(date ?? '') && rest.length > 1
        ? rest.slice(1).join('_')
        : (system.split('__')[1] ?? null),
    benchmark: v.benchmark ?? null,
    date: /^\d{8}$/.test(date ?? '') ? `${date!.slice(0, 4)}-${date!.slice(4, 6)}-${date!.slice(6)}` : null,
    instances,
    declaredTotal: null,
    absentIsUnresolved: false,
    notes,
  }
}

/**
 * The verdict a published row's own verifier fields give, when it has any: `report.resolved`,
 * `test_result.report.resolved` (SWE-bench-style evaluation reports), or a `reward` in [0, 1].
 */
function ownVerdict(r: Record<string, unknown>): { pass: boolean; said: string } | null {
  const obj = (x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : null
  const report = obj(r.report) ?? obj(obj(r.test_result)?.report)
  if (report && typeof report.resolved === 'boolean')
    return { pass: report.resolved, said: `its report says resolved ${report.resolved}` }
  if (typeof r.reward === 'number' && Number.isFinite(r.reward) && r.reward >= 0 && r.reward <= 1)
    return { pass: r.reward >= 1, said: `its reward is ${r.reward}` }
  return null
}
