import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { simulatedPower, sizeInteraction } from '../../src/calibrate/interaction.js'
import { main } from '../../src/cli/index.js'
import { HwError } from '../../src/util/errors.js'
import { captureOutput } from '../support/capture.js'

const demo = path.resolve(import.meta.dirname, '..', '..', 'manifests', 'demo.yml')
const io = captureOutput()

describe('calibrate: sizing the harness × model interaction test', () => {
  it('normal approximation by hand, then raised until the exact test reaches 80% in simulation', () => {
    // δ = 0.4, g = ±0.2, q = 0.3: Var(D) = 2(0.3 − 0.04) = 0.52; (1.95996 + 0.84162)² = 7.8489;
    // n = 7.8489 × 0.52 / 0.16 = 25.51 → 26.
    const r = sizeInteraction({
      interactionPp: 40,
      discordance: 0.3,
      alpha: 0.05,
      power: 0.8,
      sims: 600,
      seed: 3,
    })
    expect(r.blocks_normal).toBe(26)
    expect(r.blocks).toBeGreaterThanOrEqual(26)
    expect(r.simulated_power).toBeGreaterThanOrEqual(0.8)
    // Not oversized: the exact test at 60% of the answer stays well under the target.
    expect(
      simulatedPower(Math.floor(r.blocks * 0.6), 0.3, 0.2, { alpha: 0.05, sims: 600, seed: 3 }),
    ).toBeLessThan(0.75)
    // No interaction: the exact test rejects at most α of the time (3 SE of Monte Carlo error).
    expect(simulatedPower(r.blocks, 0.3, 0, { alpha: 0.05, sims: 600, seed: 4 })).toBeLessThanOrEqual(
      0.05 + 3 * Math.sqrt((0.05 * 0.95) / 600),
    )
  })

  it('refuses a discordance too small for the stated gaps', () => {
    expect(() =>
      sizeInteraction({ interactionPp: 60, discordance: 0.2, alpha: 0.05, power: 0.8, sims: 10, seed: 1 }),
    ).toThrow(HwError)
  })

  it('harness-watch calibrate --interaction prints the blocks needed and the panel’s shortfall', async () => {
    expect(
      await main(['calibrate', demo, '--interaction', '40', '--discordance', '0.3', '--sims', '300']),
    ).toBe(0)
    expect(io.out).toMatch(
      /^harness × model interaction: \d+ blocks on both models give \d+\.\d% power \(target 80\.0%\) to detect an interaction of 40 pp/,
    )
    expect(io.out).toMatch(/this panel has 16 comparable block\(s\): \d+ short/)
    // The demo declares one model: the sizing says so rather than implying the test will run.
    expect(io.err).toContain('declares one model for every cell: no interaction is estimated')
    expect(await main(['calibrate', demo, '--interaction', '0'])).not.toBe(0)
    expect(io.err).toContain('--interaction must be a number of points above 0 and at most 200')
  })
})
