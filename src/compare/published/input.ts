import type { Coverage } from '../../telemetry/ledger.js'
import { type CellInput, type ComparisonInput, emptyMetrics, type Observation } from '../observations.js'
import type { PublishedSystem } from './formats.js'

export interface PublishedOptions {
  /** The panel; default the union of the ids both files name. */
  instances?: string[]
  /** A null grade in the source: `unresolved` as the publishers' own scores count it (default), or `exclude`. */
  ungraded?: 'unresolved' | 'exclude'
  resamples?: number
  seed?: number
  level?: number
  inputs?: Array<{ path: string; sha256: string }>
}

/**
 * Two published systems → the shared ComparisonInput (pure), so published results go through exactly
 * the blocks and statistics our own runs do. Each system is one cell; each of its trials is one
 * observation; the published per-instance cost is the spend, `api_calls` the request count; an
 * instance without a cost has `missing` telemetry (never a zero). Identity checks do not apply (no plan).
 */
export function publishedInput(
  a: PublishedSystem,
  b: PublishedSystem,
  opts: PublishedOptions = {},
): ComparisonInput {
  const ungraded = opts.ungraded ?? 'unresolved'
  const [idA, idB] = cellIds(a, b)
  const panel = opts.instances ?? [...new Set([...a.instances.keys(), ...b.instances.keys()])].sort()
  const notes: string[] = [...a.notes, ...b.notes]
  const trials = (s: PublishedSystem) => Math.max(1, ...[...s.instances.values()].map((x) => x.trials.length))
  const cells: CellInput[] = [cellOf(a, idA, 'baseline', trials(a)), cellOf(b, idB, 'treatment', trials(b))]
  const observations: Observation[] = []
  // A panel id neither file names is not a tie (nothing says either system ran it): its block is
  // incomplete, even where a resolved list would read an absent id as unresolved.
  const inNeither = new Set(panel.filter((i) => !a.instances.has(i) && !b.instances.has(i)))
  const preReasons: ComparisonInput['preReasons'] = []
  for (const instance of inNeither) {
    for (const cell of [idA, idB]) {
      preReasons.push({
        instance,
        reason: { code: 'missing_attempt', cell, trial: null, attempt: null, detail: 'not in either file' },
      })
    }
  }
  if (inNeither.size > 0) {
    const listed = [...inNeither].slice(0, 20).join(', ')
    notes.push(
      `${inNeither.size} panel instance(s) are in neither file (incomplete blocks, not ties): ${listed}${inNeither.size > 20 ? `, … ${inNeither.size - 20} more` : ''}`,
    )
  }
  for (const [sys, id] of [
    [a, idA],
    [b, idB],
  ] as const) {
    let nulls = 0
    let absent = 0
    for (const instance of panel) {
      if (inNeither.has(instance)) continue
      let x = sys.instances.get(instance)
      if (!x && sys.absentIsUnresolved && (sys.declaredTotal === null || sys.declaredTotal >= panel.length)) {
        x = { trials: ['unresolved'], costUsd: null, requests: null }
      }
      if (!x) {
        absent++
        continue
      }
      x.trials.forEach((t, trial) => {
        if (t === 'ungraded') nulls++
        const outcome = t === 'ungraded' ? (ungraded === 'unresolved' ? 'unresolved' : 'ungraded') : t
        const perTrial = x.trials.length
        const coverage: Coverage = x.costUsd === null ? 'missing' : 'complete'
        const metrics = emptyMetrics()
        metrics.spend_usd = x.costUsd === null ? null : x.costUsd / perTrial
        metrics.proxy_requests = x.requests === null ? null : x.requests / perTrial
        observations.push({
          cell: id,
          instance,
          trial,
          outcome,
          exitClass: null,
          attempts: 1,
          coverage,
          coverageDetail: coverage === 'missing' ? 'no per-instance cost published' : null,
          attemptCoverage: {
            complete: coverage === 'complete' ? 1 : 0,
            partial: 0,
            missing: coverage === 'missing' ? 1 : 0,
            unknown: 0,
          },
          metrics,
          shape: { firstRequestBytes: null, firstRequestTools: null, auxRequests: null },
          identity: {
            harnessVersion: sys.harnessVersion,
            configHash: null,
            models: sys.model ? [sys.model] : [],
          },
          reasons: [],
          startedAt: null,
          endedAt: null,
        })
      })
    }
    if (nulls > 0) {
      notes.push(
        ungraded === 'unresolved'
          ? `${sys.name}: ${nulls} trial(s) with a null grade counted as unresolved, as the published score counts them (use --ungraded exclude to leave those blocks out)`
          : `${sys.name}: ${nulls} trial(s) with a null grade left out as ungraded (their blocks are incomplete)`,
      )
    }
    if (absent > 0) notes.push(`${sys.name}: ${absent} panel instance(s) not in the file (missing)`)
  }
  if (a.model && b.model && a.model !== b.model) {
    notes.push(
      `the systems name different models (${a.model} vs ${b.model}): the difference is not the harness's alone`,
    )
  }
  const sameModel = a.model !== null && a.model === b.model
  return {
    kind: 'published',
    experimentId: `${idA}-vs-${idB}`,
    runId: null,
    round: 0,
    cells,
    baseline: idA,
    treatments: [idB],
    instances: panel,
    quarantine: [],
    observations,
    preReasons,
    missingLegs: [],
    inputErrors: [],
    inputs: opts.inputs ?? [],
    stamp: {
      manifestSha256: null,
      planSha256: null,
      model: { declared: sameModel ? a.model : null, provider: null, api: null },
      panel: {
        family: a.benchmark ?? b.benchmark,
        revision: null,
        source: `published: ${a.format}, ${b.format}`,
      },
      verifier: 'as published',
      budgets: null,
      retries: null,
      telemetrySource: 'published per-instance cost',
      thresholds: null,
    },
    options: { resamples: opts.resamples ?? 10_000, seed: opts.seed ?? 1, level: opts.level ?? 0.95 },
    notes,
  }
}

function cellOf(s: PublishedSystem, id: string, role: 'baseline' | 'treatment', trials: number): CellInput {
  return {
    id,
    role,
    label: s.name,
    harness: s.harness,
    versionDeclared: s.harnessVersion,
    configHash: null,
    api: null,
    modelDeclared: s.model,
    trials,
  }
}

/** Cell ids from the systems' names: id-safe, distinct. */
function cellIds(a: PublishedSystem, b: PublishedSystem): [string, string] {
  const safe = (s: string) =>
    s
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[^A-Za-z0-9]+/, '')
      .slice(0, 64) || 'system'
  const ida = safe(path(a))
  let idb = safe(path(b))
  if (idb === ida) idb = `${idb.slice(0, 60)}-2`
  return [ida, idb]
}

/** A short name: the file's base name for file formats, the system for multi-system files. */
function path(s: PublishedSystem): string {
  if (s.format === 'terminal-bench-per-task') return s.name
  const file = s.source.split('#')[0] ?? s.source
  const base = file.split(/[\\/]/).pop() ?? file
  if (s.format === 'openhands-instance-results') {
    const parts = file.split(/[\\/]/)
    const i = parts.lastIndexOf('instance_results')
    if (i > 0) return parts[i - 1]!
  }
  return base.replace(/\.json$/i, '')
}
