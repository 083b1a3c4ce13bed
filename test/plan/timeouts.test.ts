// timeout-minutes of the leg jobs, from the manifest's budgets.
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import { legTimeoutMinutes, legTimeoutNeed, legTimeoutWarning } from '../../src/plan/timeouts.js'

const root = path.resolve(import.meta.dirname, '..', '..')

async function plan(patch: (m: Record<string, unknown>) => void = () => {}, callKey?: string) {
  const loaded = await loadManifest(path.join(root, 'test', 'fixtures', 'workflow', 'canary.yml'))
  patch(loaded.manifest as unknown as Record<string, unknown>)
  return buildPlan(loaded, await resolvePanel(loaded.manifest, loaded.dir), { callKey })
}

describe('leg timeout-minutes from the budgets', () => {
  it('attempts × (attempt + verifier timeout) of the longest leg, + 20 min set-up', async () => {
    const p = await plan()
    const m = p.manifest as { budgets: { timeout_s: number }; benchmark: { verifier: { timeout_s: number } } }
    const longest = Math.max(...p.legs.map((l) => l.instances.length))
    const expected =
      Math.ceil((longest * p.trials * (m.budgets.timeout_s + m.benchmark.verifier.timeout_s)) / 60) + 20
    expect(legTimeoutMinutes(p)).toBe(expected)
  })

  it('retries multiply the attempts and add their backoff; never above the hosted 360 minutes', async () => {
    const base = legTimeoutMinutes(await plan())
    const retried = await plan((m) => {
      m.retries = { max: 2, on: ['infra'], backoff_s: 60 }
    })
    expect(legTimeoutMinutes(retried)).toBeGreaterThan(base)
    const huge = await plan((m) => {
      m.budgets = { timeout_s: 86_400 }
    })
    expect(legTimeoutMinutes(huge)).toBe(360)
  })

  it('the call key is in every artifact name, and refused when it could break one', async () => {
    const p = await plan(() => {}, 'weekly-2')
    expect(p.call_key).toBe('weekly-2')
    for (const l of p.legs) expect(l.artifact.startsWith('hw-canary-weekly-2-')).toBe(true)
    await expect(plan(() => {}, '../x')).rejects.toThrow(/call key/)
  })

  it('no silent cap: a leg that needs more than 360 minutes is a warning naming the need and the shards that fit', async () => {
    expect(legTimeoutWarning(await plan())).toBeNull()
    // Nine instances on 2 shards (5 on the longest leg) × (3600 + 30) s = 303 min + 20: fits.
    const slow = await plan((m) => {
      m.budgets = { timeout_s: 3600 }
    })
    expect(legTimeoutNeed(slow)).toEqual({ minutes: 323, neededMinutes: 323, shardsToFit: 2 })
    expect(legTimeoutWarning(slow)).toBeNull()
    // 2 trials: 5 × 2 × 3630 s = 605 min + 20 = 625 > 360. One instance takes 2 × 3630 s = 121 min,
    // so 340 min hold 2 per leg: ⌈9 / 2⌉ = 5 shards.
    const long = await plan((m) => {
      m.budgets = { timeout_s: 3600 }
      m.trials = 2
    })
    expect(legTimeoutNeed(long)).toEqual({ minutes: 360, neededMinutes: 625, shardsToFit: 5 })
    expect(legTimeoutWarning(long)).toBe(
      "a leg may need 625 minutes (longest leg's attempts × (budgets.timeout_s + verifier timeout), retries, 20 min set-up) but GitHub-hosted runners stop a job at 360: its timeout-minutes is capped at 360; set shards.count to 5 or more (now 2) so each leg fits (self-hosted runners allow 5 days)",
    )
    const never = await plan((m) => {
      m.budgets = { timeout_s: 86_400 }
    })
    expect(legTimeoutNeed(never).shardsToFit).toBeNull()
    expect(legTimeoutWarning(never)).toMatch(/even one instance per leg does not fit/)
  })
})
