import type { AnalystPort, AnalystReply, AnalystSession } from '../dialogue/analyst-port.js'

/** One dossier tool call the scripted analyst makes: the bridge tool's own name and its arguments. */
export interface AnalystCall {
  tool: string
  args: Record<string, unknown>
}

/**
 * What the scripted analyst does next, given the tool texts it has received so far (in call order):
 * the next tool call, or its final answer. Pure; a tool text that is not the JSON the dossier tools
 * return gives an answer object saying so (which the proposal schema then rejects).
 */
export function analystNext(results: readonly string[]): { call: AnalystCall } | { answer: unknown } {
  const steps = analystSteps()
  try {
    let r = steps.next('')
    for (const text of results) {
      if (r.done) break
      r = steps.next(text)
    }
    return r.done ? { answer: r.value } : { call: r.value }
  } catch (e) {
    return { answer: { error: `the analyst could not read a tool result: ${(e as Error).message}` } }
  }
}

/**
 * The scripted analyst run in process: `analystSteps` driven by the session's tool caller (the dossier
 * tools over MCP). It makes no model requests (requests 0, spend 0). The product's analyst runs through
 * a harness instead (pipeline/analyst-harness.ts), where the scripted model replays the same steps;
 * this one is the fallback when no harness can run.
 */
export const scriptedAnalyst: AnalystPort = {
  route: 'scripted',
  async answer(session: AnalystSession): Promise<AnalystReply> {
    const steps = analystSteps()
    let r = steps.next('')
    while (!r.done) r = steps.next(await session.callTool(r.value.tool, r.value.args))
    return { answer: r.value, requests: 0, spend_usd: 0 }
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

/**
 * The scripted model's analyst as a step function: it yields the dossier tool calls it makes, one at a
 * time, receives each tool's text, and returns its answer (an object meant to validate against the
 * proposal schema). It lists the pairs, reads both cells' request curves and test progress for the
 * first driving instance of the first comparison, and names the largest behaviour difference it sees —
 * tools offered per request, cache reads, repeated reads, or stopping on a failing test — quoting only
 * numbers the tools returned. Deterministic: the same tool texts give the same calls and answer, so the
 * scripted model (stateless per request) replays it from the tool results already in the conversation.
 */
export function* analystSteps(): Generator<AnalystCall, unknown, string> {
  const pairs = JSON.parse(yield { tool: 'list_pairs', args: {} }) as Pair[]
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
  const b = JSON.parse(yield { tool: 'view_request_curve', args: { attempt: bId } }) as CurveView
  const t = JSON.parse(yield { tool: 'view_request_curve', args: { attempt: tId } }) as CurveView
  const tp = JSON.parse(yield { tool: 'view_test_progress', args: { attempt: tId } }) as Progress
  const tl = JSON.parse(yield { tool: 'view_timeline', args: { attempt: tId, limit: 5 } }) as Timeline
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
