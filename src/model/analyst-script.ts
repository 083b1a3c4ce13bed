import type { AnalystPort, AnalystReply, AnalystSession } from '../diagnose/port.js'

/**
 * The scripted model's analyst: a deterministic reader of the dossier tools, so the whole diagnosis
 * runs offline. It lists the pairs, reads both cells' request curves and test progress for the first
 * driving instance of the first comparison, and names the largest behaviour difference it sees —
 * tools offered per request, cache reads, repeated reads, or stopping on a failing test — quoting only
 * numbers the tools returned. It makes no model requests (requests 0, spend 0).
 */
export const scriptedAnalyst: AnalystPort = {
  route: 'scripted',
  async answer(session: AnalystSession): Promise<AnalystReply> {
    return { answer: await analyse(session), requests: 0, spend_usd: 0 }
  },
}

interface Pair {
  id: string
  status: string | null
  baseline: string
  treatment: string
  instances: { instance: string; baseline_attempts: string[]; treatment_attempts: string[] }[]
}
interface CurveView {
  harness: string
  requests: { count: number; cache_read_share: number | null; max_tools: number | null }
  repeats: { repeated_reads: number; event_ids: string[] }
  failing_loops: { loops: number; event_ids: string[] }
  curve: { after_event: string | null }[]
}
interface Progress {
  verification: { stopped_with_known_failures: boolean }
  tests: { event_id: string }[]
}
interface Timeline {
  events: { event_id: string }[]
}

async function analyse(s: AnalystSession): Promise<unknown> {
  const pairs = JSON.parse(await s.callTool('list_pairs', {})) as Pair[]
  // A confirmed comparison first: that is the difference to explain.
  pairs.sort((x, y) => Number(y.status === 'confirmed') - Number(x.status === 'confirmed'))
  const pair = pairs.find((p) =>
    p.instances.some((i) => i.baseline_attempts.length > 0 && i.treatment_attempts.length > 0),
  )
  if (!pair) return { hypothesis: 'no driving instance has attempts on both sides' }
  const affected = pair.instances.filter(
    (i) => i.baseline_attempts.length > 0 && i.treatment_attempts.length > 0,
  )
  const inst = affected[0]!
  const bId = inst.baseline_attempts[0]!
  const tId = inst.treatment_attempts[0]!
  const b = JSON.parse(await s.callTool('view_request_curve', { attempt: bId })) as CurveView
  const t = JSON.parse(await s.callTool('view_request_curve', { attempt: tId })) as CurveView
  const tp = JSON.parse(await s.callTool('view_test_progress', { attempt: tId })) as Progress
  const tl = JSON.parse(await s.callTool('view_timeline', { attempt: tId, limit: 5 })) as Timeline
  const firstEvent = t.curve.find((c) => c.after_event)?.after_event ?? tl.events[0]?.event_id
  const cite = (ids: (string | undefined | null)[], claim: string) => ({
    instance: inst.instance,
    cell: pair.treatment,
    event_ids: ids.filter((x): x is string => !!x).slice(0, 5),
    claim,
  })
  let finding: Finding
  const bt = b.requests.max_tools
  const tt = t.requests.max_tools
  const bc = b.requests.cache_read_share
  const tc = t.requests.cache_read_share
  if (bt !== null && tt !== null && tt > bt) {
    finding = {
      category: 'tool_schema',
      hypothesis: `${pair.treatment} offers ${tt} tool schemas per request where ${pair.baseline} offers ${bt}; every request carries the extra schema bytes.`,
      evidence: cite([firstEvent], `requests of ${pair.treatment} carry ${tt} tools`),
      variable: 'tools offered to the model',
      current: `${tt} tools`,
      proposed: `${bt} tools (drop the extra tool)`,
      metric: 'input_fresh_tokens',
      direction: 'decrease',
      change: `fresh input tokens per request fall; tools per request go from ${tt} to ${bt}`,
    }
  } else if (bc !== null && tc !== null && tc < bc) {
    finding = {
      category: 'caching',
      hypothesis: `${pair.treatment} reads a cache share of ${tc} of its input where ${pair.baseline} reads ${bc}: its prompt cache is not hit.`,
      evidence: cite([firstEvent], `cache-read share ${tc} over ${t.requests.count} requests`),
      variable: 'prompt caching at the model route',
      current: `cache-read share ${tc}`,
      proposed: `caching enabled as for ${pair.baseline}`,
      metric: 'spend_usd',
      direction: 'decrease',
      change: `the cache-read share rises toward ${bc} and spend per task falls`,
    }
  } else if (t.repeats.repeated_reads > 0) {
    finding = {
      category: 'prompt_or_instructions',
      hypothesis: `${pair.treatment} re-reads files it has already read (${t.repeats.repeated_reads} repeated reads with unchanged output), spending requests without new information.`,
      evidence: cite(t.repeats.event_ids, `${t.repeats.repeated_reads} repeated reads with unchanged output`),
      variable: 'instructions given to the harness',
      current: 'the cell’s instructions as configured',
      proposed: 'the baseline’s instructions',
      metric: 'proxy_requests',
      direction: 'decrease',
      change: 'repeated reads disappear and requests per task fall',
    }
  } else {
    finding = {
      category: 'verification',
      hypothesis: `${pair.treatment} ${tp.verification.stopped_with_known_failures ? 'stops while its last test run fails' : 'makes more requests'} on ${inst.instance}.`,
      evidence: cite([...tp.tests.map((x) => x.event_id), firstEvent], 'test runs of the treatment'),
      variable: 'harness configuration',
      current: 'as configured',
      proposed: 'the baseline configuration',
      metric: 'resolved',
      direction: 'increase',
      change: 'the resolve rate rises on the affected instances',
    }
  }
  return {
    hypothesis: finding.hypothesis,
    alternative_hypotheses: [
      'the difference is run-to-run noise on these instances (the confirmation round argues against it)',
    ],
    category: finding.category,
    supporting_evidence: [finding.evidence],
    counterevidence: [],
    estimated_impact: `the driving instances of ${pair.id} listed in affected_instances`,
    affected_instances: affected.map((i) => i.instance),
    predicted_observable_change: finding.change,
    single_variable_experiment: {
      variable: finding.variable,
      current_value: finding.current,
      proposed_value: finding.proposed,
      manifest_patch: [
        'cells:',
        `  - id: ${pair.treatment}-candidate`,
        `    harness: ${t.harness}`,
        `    # same version and config as ${pair.treatment}, with only "${finding.variable}" changed: ${finding.proposed}`,
      ].join('\n'),
      metric: finding.metric,
      expected_direction: finding.direction,
    },
  }
}

interface Finding {
  category: string
  hypothesis: string
  evidence: { instance: string; cell: string; event_ids: string[]; claim: string }
  variable: string
  current: string
  proposed: string
  metric: string
  direction: 'increase' | 'decrease'
  change: string
}
