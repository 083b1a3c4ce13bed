import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { attempt, ids, makePlan, writeArtifacts, writePlan } from './fixtures.js'

// Three instances, two trials each. The request shape of an instance is the mean over its trials,
// and an instance with a trial that did not report a value has none (it is left out, not zero),
// whether that trial is its first (t-003) or its last (t-002).
describe('cell summary', () => {
  it('takes request shape and resources per instance, as means over trials, leaving out what a trial lacks', async () => {
    const plan = await makePlan({ trials: 2, panel: { source: 'inline', instances: ids(3) } })
    const shapes: Record<
      string,
      Array<{ bytes: number | null; tools: number | null; aux: number | null }>
    > = {
      't-001': [
        { bytes: 10_000, tools: 7, aux: 1 },
        { bytes: 13_000, tools: 8, aux: 2 },
      ],
      't-002': [
        { bytes: 20_000, tools: 9, aux: 0 },
        { bytes: 30_000, tools: null, aux: 0 },
      ],
      't-003': [
        { bytes: null, tools: 5, aux: 3 },
        { bytes: 40_000, tools: 6, aux: 4 },
      ],
    }
    const attempts = plan.panel.instances.flatMap((instance, i) =>
      [0, 1].flatMap((trial) =>
        ['a', 'b'].map((cell) => {
          const s = shapes[instance]![trial]!
          return attempt(plan, {
            cell,
            instance,
            trial,
            // 10, 20 and 30 requests per trial: input tokens are 1,000 a request
            requests: 10 * (i + 1),
            spend: 0.25 * (i + 1) + trial,
            telemetry: { first_request_bytes: s.bytes, first_request_tools: s.tools, aux_requests: s.aux },
          })
        }),
      ),
    )
    const dir = writeArtifacts(plan, attempts)
    const out = path.join(dir, 'out')
    await aggregate({ plan: writePlan(plan), artifacts: dir, out })
    const c = JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8'))
    const a = c.cells.find((x: { id: string }) => x.id === 'a')
    const shape = a.request_shape
    expect(shape.n).toBe(3)
    // t-001: (10,000 + 13,000) / 2 = 11,500; t-002: 25,000; t-003 has a trial without it
    expect(shape.first_request_bytes).toMatchObject({ n: 2, mean: 18_250, total: 36_500 })
    // t-001: 7.5; t-003: 5.5; t-002 has a trial without it
    expect(shape.first_request_tools).toMatchObject({ n: 2, mean: 6.5, total: 13 })
    // t-001: 1.5; t-002: 0; t-003: 3.5
    expect(shape.aux_requests_per_task).toMatchObject({ n: 3, mean: 5 / 3, median: 1.5, total: 5 })
    // an instance's resources are means over its trials: 10, 20 and 30 requests per task
    expect(shape.requests_per_task).toMatchObject({ n: 3, mean: 20, median: 20, total: 60 })
    expect(shape.input_tokens_per_request).toMatchObject({ n: 3, mean: 1000, total: 3000 })
    // spend per instance, the mean of its two trials: 0.75, 1 and 1.25
    expect(a.resources.spend_usd.n).toBe(3)
    expect(a.resources.spend_usd.total).toBeCloseTo(3, 12)
    expect(a.resources.spend_usd.median).toBeCloseTo(1, 12)
  })
})
