import type { ComparisonVerdict, Decision, Signal, SignalMetric } from '../detect/schema.js'
import type { Comparison, ComparisonEntry } from '../records/comparison.js'
import { fmtNum, fmtPoints, roundHalfAway } from '../util/format.js'

/**
 * The verdict in plain words: one sentence per compared metric of each comparison, for the first
 * lines of report.md, the tracking issue and the PR comment, e.g.
 *   "`opencode` spent 2.2× `pi`'s dollars on the same 16 tasks — confirmed on a rerun."
 *   "Resolve rates are not distinguishable at n = 16 (−18.8 points, cleared on the rerun)."
 * and a headline naming each confirmed metric. Numbers come from the decision's signals (the first
 * run's estimate) or, for a metric that crossed nothing, from the comparison. Notation (b′, θ,
 * e-values, intervals) stays in the sections below. Ids are rendered by `name` (the caller's
 * escaping: code spans in Markdown, escaped HTML elsewhere). Pure.
 */

export const VERDICT_METRICS: SignalMetric[] = [
  'resolved',
  'spend_usd',
  'input_fresh_tokens',
  'proxy_requests',
]

const NOUN: Record<Exclude<SignalMetric, 'resolved'>, string> = {
  spend_usd: 'dollars',
  input_fresh_tokens: 'fresh input tokens',
  proxy_requests: 'proxy requests',
}
const VERB: Record<Exclude<SignalMetric, 'resolved'>, string> = {
  spend_usd: 'spent',
  input_fresh_tokens: 'sent',
  proxy_requests: 'made',
}
/** The metric as the headline names it. */
export const METRIC_WORD: Record<SignalMetric, string> = {
  resolved: 'resolve rate',
  spend_usd: 'spend',
  input_fresh_tokens: 'fresh input tokens',
  proxy_requests: 'proxy requests',
}
const THRESHOLD_FIELD = {
  resolved: 'resolved_deficit_pp',
  spend_usd: 'cost_ratio',
  input_fresh_tokens: 'fresh_input_ratio',
  proxy_requests: 'request_ratio',
} as const

/** A comparison to put into words: from the decision when there is one, else from the comparison. */
interface Pair {
  key: string | null
  kind: 'competitive' | 'self'
  baseline: string
  treatment: string
}

const blocks = (k: number) => `${k} block${k === 1 ? '' : 's'}`

/**
 * What a signal's state says, as the end of a sentence. Once a rerun decided, it names how many blocks
 * the rerun held (its own n, apart from the first run's n the figure before it is measured on).
 */
function stateTail(s: Signal): string {
  const r = s.rerun
  switch (s.state) {
    case 'confirmed':
      return r ? `confirmed on a rerun of ${blocks(r.complete_blocks)}` : 'confirmed on a rerun'
    case 'cleared':
      return r ? `cleared on a rerun of ${blocks(r.complete_blocks)}` : 'cleared on the rerun'
    case 'unconfirmed':
      return 'not yet confirmed: a rerun decides'
    case 'small_sample':
      return 'too few blocks to raise a breach alone'
    case 'not_confirmable':
      return 'driven only by quarantined or unstable instances, not rerun'
    case 'inconclusive':
      return r
        ? `the rerun could not decide (${r.complete_blocks} of ${blocks(r.planned_blocks)} complete)`
        : 'the rerun could not decide'
  }
}

/** A ratio as a sentence gives it: "2.2×", "0.9×", "14×". */
function ratio(x: number): string {
  const digits = x < 10 ? 1 : 0
  return `${roundHalfAway(x, digits).toFixed(digits)}×`
}

/** One sentence per metric of one comparison. */
function pairSentences(
  p: Pair,
  d: Decision | null,
  entry: ComparisonEntry | undefined,
  name: (id: string) => string,
  rerunRound: boolean,
): string[] {
  const T = name(p.treatment)
  const B = p.kind === 'self' ? `its previous run` : name(p.baseline)
  const Bs = p.kind === 'self' ? `its previous run's` : `${name(p.baseline)}'s`
  const find = (list: Signal[] | undefined, m: SignalMetric) =>
    list?.find((s) => s.key === p.key && s.metric === m) ?? null
  const out: string[] = []
  for (const m of VERDICT_METRICS) {
    const regression = find(d?.signals, m)
    const improvement = find(d?.improvements, m)
    const s = regression ?? improvement
    const n = s?.effect.n ?? (m === 'resolved' ? entry?.outcome.n : entry?.metrics[m].n)
    // A figure taken from a rerun's comparison (no signal for it) covers only the rerun blocks.
    const fromRerun = !s && rerunRound
    const tasks =
      n === undefined
        ? 'the same tasks'
        : fromRerun
          ? `the ${n} rerun task${n === 1 ? '' : 's'}`
          : `the same ${n} task${n === 1 ? '' : 's'}`
    if (m === 'resolved') {
      const diff = s?.effect.estimate ?? entry?.outcome.diff_pp ?? null
      if (diff === null) {
        if (s || entry)
          out.push(`Resolve rates could not be compared (${s?.effect.reason ?? 'no complete block'}).`)
        continue
      }
      const pts = `${fmtPoints(diff, { unit: false })} points`
      if (regression && (regression.state === 'confirmed' || regression.state === 'unconfirmed')) {
        out.push(`${T} resolved fewer of ${tasks} than ${B} (${pts}) — ${stateTail(regression)}.`)
      } else if (regression) {
        out.push(`Resolve rates are not distinguishable at n = ${n} (${pts}, ${stateTail(regression)}).`)
      } else if (improvement) {
        out.push(
          `${T} resolved more of ${tasks} than ${B} (${pts}; improvements are reported, never alarmed).`,
        )
      } else if (d) {
        out.push(
          `No resolve-rate regression at n = ${n}${fromRerun ? ' rerun blocks' : ''} (${T} − ${B}: ${pts}, within the threshold).`,
        )
      } else {
        out.push(`${T} − ${B} resolve rate on ${tasks}: ${pts} (no decision in this report).`)
      }
      continue
    }
    const est = s?.effect.estimate ?? entry?.metrics[m].ratio_of_means.estimate ?? null
    if (est === null) {
      if (s || (entry && entry.denominators.cost > 0)) {
        out.push(
          `No ${NOUN[m]} comparison (${s?.effect.reason ?? entry?.metrics[m].ratio_of_means.reason ?? 'no data'}).`,
        )
      }
      continue
    }
    const what = `${T} ${VERB[m]} ${ratio(est)} ${Bs} ${NOUN[m]} on ${tasks}`
    if (s)
      out.push(
        `${what} — ${improvement && !regression ? 'an improvement, reported, never alarmed' : stateTail(s)}.`,
      )
    else {
      const t = d?.thresholds?.[THRESHOLD_FIELD[m]]
      out.push(`${what}${typeof t === 'number' ? `, within the ${fmtNum(t, 3)}× threshold` : ''}.`)
    }
  }
  return out
}

/** Every comparison's sentences, in decision order (or the comparison's, without a decision). */
export function verdictSentences(
  d: Decision | null,
  c: Comparison | null,
  name: (id: string) => string,
): string[] {
  const pairs: Pair[] = d
    ? d.comparisons.map((v: ComparisonVerdict) => ({
        key: v.key,
        kind: v.kind,
        baseline: v.baseline,
        treatment: v.treatment,
      }))
    : (c?.comparisons ?? []).map((e) => ({
        key: null,
        kind: 'competitive' as const,
        baseline: e.baseline,
        treatment: e.treatment,
      }))
  const several = pairs.length > 1
  return pairs.flatMap((p) => {
    const entry =
      p.kind === 'competitive'
        ? c?.comparisons.find((e) => e.baseline === p.baseline && e.treatment === p.treatment)
        : undefined
    const lines = pairSentences(p, d, entry, name, (c?.round ?? 0) > 0)
    if (!several) return lines
    const who =
      p.kind === 'self'
        ? `${name(p.treatment)} against its previous run`
        : `${name(p.treatment)} vs ${name(p.baseline)}`
    if (lines.length === 0) return [`${who}: no figure to compare.`]
    return [`${who}:`, ...lines.map((l) => `- ${l}`)]
  })
}

/** The metrics confirmed by a rerun, per comparison: "spend and fresh input tokens (`b` vs `a`)". */
export function confirmedMetrics(d: Decision, name: (id: string) => string): string | null {
  const groups = new Map<string, { who: string; metrics: string[] }>()
  for (const s of d.signals) {
    if (s.state !== 'confirmed') continue
    const who =
      s.kind === 'self'
        ? `${name(s.treatment)} vs its previous run`
        : `${name(s.treatment)} vs ${name(s.baseline)}`
    const g = groups.get(s.key) ?? { who, metrics: [] }
    g.metrics.push(METRIC_WORD[s.metric])
    groups.set(s.key, g)
  }
  if (groups.size === 0) return null
  const list = (xs: string[]) =>
    xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`
  return [...groups.values()].map((g) => `${list(g.metrics)} (${g.who})`).join('; ')
}
