import type { Coverage } from '../../records/ledger.js'
import { HwError } from '../../util/errors.js'
import { clip, oneLine } from '../../util/text.js'
import { type CellInput, type ComparisonInput, emptyMetrics, type TrialObservation } from '../observations.js'
import type { PublishedSystem } from './formats.js'

export interface PublishedOptions {
  /** The panel (from `--instances`); default the union of the ids both files name. */
  instances?: string[]
  /** A null grade in the source: `unresolved` as the publishers' own scores count it (default), or `exclude`. */
  ungraded?: 'unresolved' | 'exclude'
  resamples?: number
  seed?: number
  level?: number
  inputs?: Array<{ path: string; sha256: string }>
  /** Leave out (and list) resolved ids outside the `instances` panel instead of refusing them. */
  ignoreUnknownIds?: boolean
}

/**
 * What each file covers on the panel, by its format's meaning, and the panel's consistency with it.
 * - A resolved list (`absentIsUnresolved`) covers the benchmark it declares: every panel id, absent =
 *   an unresolved attempt. Its `n_total` must agree with the panel: fewer than the panel, or (with an
 *   explicit `--instances` of the same size) resolved ids outside it, means the panel is not the file's
 *   → HwError `published_panel`. Without `--instances`, a union of named ids smaller than `n_total`
 *   cannot count the instances neither system resolved → HwError `published_panel` asking for the list.
 *   More than the panel (a sub-panel) is a warning.
 * - Per-instance formats (OpenHands, Terminal-Bench) cover exactly the ids they name: a panel id absent
 *   from the file is that system's missing attempt (an incomplete block), never a loss.
 * Returns warnings (also worth showing on the terminal) and notes for the report.
 */
export function checkPanel(
  systems: ReadonlyArray<PublishedSystem>,
  panel: ReadonlyArray<string>,
  explicit: boolean,
  ignoreUnknownIds = false,
): { warnings: string[] } {
  const warnings: string[] = []
  const inPanel = new Set(panel)
  const P = panel.length
  for (const s of systems) {
    if (!s.absentIsUnresolved) continue
    const where = s.source
    const N = s.declaredTotal
    const outside = [...s.instances.keys()].filter((i) => !inPanel.has(i)).sort()
    if (N === null) {
      if (!explicit) {
        warnings.push(
          `${s.name}: the file declares no n_total; the panel is the ${P} ids the files name, so instances neither system resolved are not counted (pass --instances with the benchmark's ids)`,
        )
      }
      continue
    }
    if (!explicit && N > P) {
      throw new HwError(
        'published_panel',
        `n_total is ${N} but the two files name only ${P} instances: a resolved list does not name the instances it left unresolved, so they cannot be counted`,
        {
          where,
          help: `pass --instances <file> listing the ${N} instances of the benchmark (a JSON array or one id per line)`,
        },
      )
    }
    if (N < P) {
      throw new HwError(
        'published_panel',
        explicit
          ? `n_total is ${N} but --instances lists ${P} instances: the file does not say which of them it attempted`
          : `n_total is ${N} but the two files name ${P} instances: the file does not say which of them it attempted`,
        {
          where,
          help: `pass --instances <file> listing the ${N} instances the file covers`,
        },
      )
    }
    if (N === P && outside.length > 0) {
      throw new HwError(
        'published_panel',
        `n_total is ${N}, as many as --instances lists, but the file names ${outside.length} id(s) not in that list (${list(outside, 5)}): the file's panel is not the --instances list`,
        { where, help: 'pass the --instances list of the benchmark the file was scored on' },
      )
    }
    if (N > P) {
      warnings.push(`${s.name}: compared on the ${P} --instances ids of the file's ${N} (n_total)`)
    }
  }
  if (explicit) {
    // Every id a file names outside the declared panel is left out and listed — all of them. A resolved
    // one would change the resolved counts and W/L/T unseen: refused unless the user says to ignore it.
    for (const s of systems) {
      const outside = [...s.instances.keys()].filter((i) => !inPanel.has(i)).sort()
      if (outside.length === 0) continue
      const resolved = outside.filter((i) => s.instances.get(i)?.trials.includes('resolved'))
      if (resolved.length > 0 && !ignoreUnknownIds) {
        throw new HwError(
          'published_panel',
          `${resolved.length} resolved id(s) are not in --instances: ${list(
            resolved.map((i) => clip(oneLine(i), 80)),
            10,
          )}`,
          {
            where: s.source,
            help: 'pass the --instances list of the benchmark the file was scored on, or --ignore-unknown-ids to leave them out (each is listed)',
          },
        )
      }
      warnings.push(
        `${clip(oneLine(s.name), 80)}: ${outside.length} id(s) the file names are not in --instances and are ignored (${resolved.length} of them resolved): ${outside.map((i) => clip(oneLine(i), 80)).join(', ')}`,
      )
    }
  }
  return { warnings }
}

/**
 * Two published systems → the shared ComparisonInput, so published results go through exactly the
 * blocks and statistics our own runs do. Each system is one cell; each of its trials is one
 * observation; the published per-instance cost is the spend, `api_calls` the request count; an
 * instance without a cost has `missing` telemetry (never a zero). A resolved-list file covers every
 * panel id (absent = unresolved); for the per-instance formats an id absent from the file is that
 * cell's missing attempt (see checkPanel). Identity checks do not apply (no plan).
 * Throws HwError `published_panel` when a resolved list's n_total disagrees with the panel.
 */
export function publishedInput(
  a: PublishedSystem,
  b: PublishedSystem,
  opts: PublishedOptions = {},
): ComparisonInput {
  const ungraded = opts.ungraded ?? 'unresolved'
  const [idA, idB] = cellIds(a, b)
  const panel = opts.instances ?? [...new Set([...a.instances.keys(), ...b.instances.keys()])].sort()
  const { warnings } = checkPanel([a, b], panel, opts.instances !== undefined, opts.ignoreUnknownIds)
  const notes: string[] = [...a.notes, ...b.notes, ...warnings]
  const trials = (s: PublishedSystem) => Math.max(1, ...[...s.instances.values()].map((x) => x.trials.length))
  const cells: CellInput[] = [cellOf(a, idA, 'baseline', trials(a)), cellOf(b, idB, 'treatment', trials(b))]
  const observations: TrialObservation[] = []
  const preReasons: ComparisonInput['preReasons'] = []
  const covers = (s: PublishedSystem, instance: string) => s.absentIsUnresolved || s.instances.has(instance)
  const inNeither = panel.filter((i) => !covers(a, i) && !covers(b, i))
  if (inNeither.length > 0) {
    notes.push(
      `${inNeither.length} panel instance(s) are in neither file (incomplete blocks, not ties): ${list(inNeither)}`,
    )
  }
  for (const [sys, id] of [
    [a, idA],
    [b, idB],
  ] as const) {
    let nulls = 0
    const absent: string[] = []
    for (const instance of panel) {
      let x = sys.instances.get(instance)
      if (!x && sys.absentIsUnresolved) x = { trials: ['unresolved'], costUsd: null, requests: null }
      if (!x) {
        // Nothing says this system ran the instance: its attempt is missing, the block incomplete.
        absent.push(instance)
        preReasons.push({
          instance,
          reason: {
            code: 'missing_attempt',
            cell: id,
            trial: null,
            attempt: null,
            detail: covers(sys === a ? b : a, instance) ? 'not in the file' : 'not in either file',
          },
        })
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
    const only = absent.filter((i) => covers(sys === a ? b : a, i))
    if (only.length > 0) {
      notes.push(
        `${sys.name}: ${only.length} panel instance(s) not in the file (missing attempts, incomplete blocks): ${list(only)}`,
      )
    }
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
        source: `published: ${a.format === b.format ? a.format : `${a.format}, ${b.format}`}`,
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
  // Cells are named after the systems the files declare (their file or folder name when they declare none).
  const ida = safe(a.name || path(a))
  let idb = safe(b.name || path(b))
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

/** Up to `max` ids, then how many more. */
function list(ids: ReadonlyArray<string>, max = 20): string {
  return `${ids.slice(0, max).join(', ')}${ids.length > max ? `, … ${ids.length - max} more` : ''}`
}
