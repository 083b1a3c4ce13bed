import { type TrialRequests, zeroParts } from '../ingest/trial-requests.js'
import { REQUEST_ROLES } from '../records/ledger.js'
import {
  REQUEST_PROFILE_METRICS,
  type RequestProfile,
  type RequestProfileMetric,
} from '../records/request-profile.js'
import { bootstrapRatioOfMeans, chosenInterval } from '../stats/index.js'
import type { Block, CellBlock } from './blocks.js'

export const REQUEST_PROFILE_RULE =
  "each proxy request's role is decided at the proxy by the first matching rule (retry: same body hash as a failed request within 120 s; compaction: the prompt asks to condense the conversation, or the history was replaced by a summary; title / summary: no tools and the prompt asks for one; fallback: another model than the route's; subagent: another system prompt and fewer tools than the primary; primary: tools and the primary's system prompt or tools); a request no rule claims is unclassified. Counts and spend sum every attempt; part sizes are per request; ratios are ratios of means over blocks with complete telemetry and roles on both cells, paired block bootstrap"

type Parts = NonNullable<TrialRequests['parts']>

/** One trial's value of a compared metric, or null when it is not known. */
function trialValue(r: TrialRequests | null | undefined, m: RequestProfileMetric): number | null {
  if (!r) return null
  if (m === 'primary_requests' || m === 'other_requests') {
    if (!r.roles) return null
    const primary = r.roles.primary.requests
    if (m === 'primary_requests') return primary
    let all = 0
    for (const role of REQUEST_ROLES) all += r.roles[role].requests
    return all - primary
  }
  if (!r.parts) return null
  return m === 'request_bytes' ? r.parts.bytes : r.parts[m as keyof Parts]
}

/** A cell's value in one block: the mean over its trials; null when any trial lacks it or telemetry is not complete. */
function blockValue(cb: CellBlock | undefined, m: RequestProfileMetric): number | null {
  if (!cb?.costComplete || cb.trials.length === 0) return null
  let sum = 0
  for (const t of cb.trials) {
    const v = trialValue(t.requests, m)
    if (v === null) return null
    sum += v
  }
  return sum / cb.trials.length
}

interface Options {
  resamples: number
  seed: number
  level: number
}

/** The paired ratio of one metric between two cells over the blocks where both are known. */
function ratio(
  blocks: readonly Block[],
  baseline: string,
  treatment: string,
  m: RequestProfileMetric,
  opts: Options,
): RequestProfile['comparisons'][number]['ratios'][number] {
  const base: number[] = []
  const treat: number[] = []
  for (const b of blocks) {
    if (b.quarantined) continue
    const x = blockValue(b.cells.get(baseline), m)
    const y = blockValue(b.cells.get(treatment), m)
    if (x === null || y === null) continue
    base.push(x)
    treat.push(y)
  }
  const sum = (xs: number[]) => xs.reduce((s, v) => s + v, 0)
  if (base.length === 0) {
    return {
      metric: m,
      n: 0,
      baseline_total: null,
      treatment_total: null,
      estimate: null,
      ci: null,
      method: 'none',
      reason: 'no block with complete telemetry and request roles on both cells',
    }
  }
  const pb = bootstrapRatioOfMeans(base, treat, { B: opts.resamples, seed: opts.seed, level: opts.level })
  const c = chosenInterval(pb)
  return {
    metric: m,
    n: base.length,
    baseline_total: sum(base),
    treatment_total: sum(treat),
    estimate: c.estimate,
    ci: c.ci ? [c.ci[0], c.ci[1]] : null,
    method: `paired block bootstrap of the ratio of means, ${c.method} (B = ${c.B})`,
    reason: c.reason,
  }
}

const round = (x: number): number => Math.round(x * 1e10) / 1e10

/** One cell's roles, parts and parameters over all its trials (every attempt summed). */
function cellProfile(id: string, blocks: readonly Block[]): RequestProfile['cells'][number] {
  const roles = new Map(REQUEST_ROLES.map((r) => [r, { requests: 0, spend: 0 as number | null }]))
  let trials = 0
  let without = 0
  const parts: Parts = zeroParts()
  let withParts = 0
  const params: Record<string, string[]> = {}
  for (const b of blocks) {
    for (const t of b.cells.get(id)?.trials ?? []) {
      const r = t.requests
      if (!r?.roles) {
        without++
        continue
      }
      trials++
      for (const role of REQUEST_ROLES) {
        const c = roles.get(role) as { requests: number; spend: number | null }
        const x = r.roles[role]
        c.requests += x.requests
        c.spend = c.spend === null || x.spend_usd === null ? null : c.spend + x.spend_usd
      }
      if (r.parts) {
        withParts++
        for (const k of Object.keys(parts) as (keyof Parts)[]) parts[k] += r.parts[k]
      }
      for (const [name, values] of Object.entries(r.params)) {
        const list = params[name] ?? []
        params[name] = list
        for (const v of values) if (!list.includes(v) && list.length < 8) list.push(v)
      }
    }
  }
  for (const list of Object.values(params)) list.sort()
  let total = 0
  for (const c of roles.values()) total += c.requests
  const per = (v: number): number | null => (parts.requests > 0 ? round(v / parts.requests) : null)
  return {
    id,
    trials,
    trials_without_roles: without,
    roles: REQUEST_ROLES.filter((r) => (roles.get(r)?.requests ?? 0) > 0).map((role) => {
      const c = roles.get(role) as { requests: number; spend: number | null }
      return {
        role,
        requests: c.requests,
        share: total > 0 ? round(c.requests / total) : null,
        spend_usd: c.spend === null ? null : round(c.spend),
      }
    }),
    parts:
      withParts === 0
        ? null
        : {
            requests: parts.requests,
            unread: parts.unread,
            per_request: {
              request_bytes: per(parts.bytes),
              tool_schema_bytes: per(parts.tool_schema_bytes),
              system_bytes: per(parts.system_bytes),
              history_bytes: per(parts.history_bytes),
              latest_message_bytes: per(parts.latest_message_bytes),
              cache_prefix_bytes: per(parts.cache_prefix_bytes),
            },
            cache_prefix_share:
              parts.bytes > 0 ? round(Math.min(1, parts.cache_prefix_bytes / parts.bytes)) : null,
          },
    params,
  }
}

/**
 * The comparison's request profile (pure, seeded): each cell's requests by role with spend, the
 * per-request sizes of their parts, the parameters sent, and each treatment's paired ratios of the
 * {@link REQUEST_PROFILE_METRICS} against the baseline (ratio of means over blocks, paired block
 * bootstrap by src/stats). Null when no trial recorded request roles.
 */
export function requestProfile(
  blocks: readonly Block[],
  cellIds: readonly string[],
  pairs: readonly ProfilePair[],
  opts: Options,
): RequestProfile | null {
  const cells = cellIds.map((id) => cellProfile(id, blocks))
  if (cells.every((c) => c.trials === 0)) return null
  return {
    rule: REQUEST_PROFILE_RULE,
    cells,
    comparisons: pairs.map((p) => ({
      baseline: p.baseline,
      treatment: p.treatment,
      ratios: REQUEST_PROFILE_METRICS.map((m) => ratio(p.blocks, p.baseline, p.treatment, m, opts)),
    })),
  }
}

/** One comparison of the profile: its two cells and the blocks that pair them (one model's blocks). */
export interface ProfilePair {
  baseline: string
  treatment: string
  blocks: readonly Block[]
}
