import { createRng, type InteractionBlock, normalQuantile, pairedInteraction } from '../stats/index.js'
import { HwError } from '../util/errors.js'

/**
 * Sizing the harness × model interaction test (the exact sign-flip test of src/stats/interaction.ts):
 * how many blocks, run on both models, give the stated power to detect an interaction of δ points.
 *
 * World: on model A the treatment harness is ahead by +δ/2, on model B behind by δ/2 (the ranking
 * reverses, Î = δ); within each model a block is discordant with probability q (the discordance), so
 * the per-block gap d is +1 with probability (q + g)/2 and −1 with (q − g)/2; the two models draw
 * independently. Var(D) = (q − g_A²) + (q − g_B²), and the normal approximation gives
 *   n ≈ (z₁₋α/₂ + z_power)² · Var(D) / δ².
 * That n is then checked by seeded simulation of the exact test and raised by 5% steps until the
 * simulated power reaches the target (the exact test on few discordant blocks is conservative).
 */
export interface InteractionSizingInput {
  /** Interaction to detect, percentage points (gap on A minus gap on B), > 0. */
  interactionPp: number
  /** Probability a block is discordant within one model, in (0, 1]. */
  discordance: number
  alpha: number
  power: number
  sims: number
  seed: number
}

export interface InteractionSizing {
  interaction_pp: number
  discordance: number
  alpha: number
  power_target: number
  /** Normal-approximation blocks. */
  blocks_normal: number
  /** Blocks whose simulated power reaches the target (≥ blocks_normal). */
  blocks: number
  /** Simulated power of the exact test at `blocks`. */
  simulated_power: number
  sims: number
  seed: number
}

const MAX_BLOCKS = 100_000

export function sizeInteraction(input: InteractionSizingInput): InteractionSizing {
  const delta = input.interactionPp / 100
  const q = input.discordance
  if (!(delta > 0) || delta > 2) {
    throw new HwError(
      'bad_option',
      `--interaction must be above 0 and at most 200 pp, got ${input.interactionPp}`,
    )
  }
  if (!(q > 0) || q > 1) throw new HwError('bad_option', `--discordance must be in (0, 1], got ${q}`)
  const g = delta / 2
  if (q < g) {
    throw new HwError(
      'bad_option',
      `a gap of ±${(g * 100).toFixed(1)} pp on each model needs a discordance of at least ${g.toFixed(3)} (got ${q})`,
    )
  }
  const variance = 2 * (q - g * g)
  const z = normalQuantile(1 - input.alpha / 2) + normalQuantile(input.power)
  const blocksNormal = Math.max(2, Math.ceil((z * z * variance) / (delta * delta)))
  let n = blocksNormal
  let power = simulatedPower(n, q, g, input)
  while (power < input.power && n < MAX_BLOCKS) {
    n = Math.min(MAX_BLOCKS, Math.ceil(n * 1.05))
    power = simulatedPower(n, q, g, input)
  }
  return {
    interaction_pp: input.interactionPp,
    discordance: q,
    alpha: input.alpha,
    power_target: input.power,
    blocks_normal: blocksNormal,
    blocks: n,
    simulated_power: power,
    sims: input.sims,
    seed: input.seed,
  }
}

/** Share of `sims` simulated experiments of n blocks in which the exact test rejects at α. */
export function simulatedPower(
  n: number,
  q: number,
  g: number,
  input: Pick<InteractionSizingInput, 'alpha' | 'sims' | 'seed'>,
): number {
  const rng = createRng(input.seed)
  // One model's block: (base, treat) with d = +1 w.p. (q+g)/2, −1 w.p. (q−g)/2, else a tie.
  const draw = (gap: number): [boolean, boolean] => {
    const u = rng.nextFloat()
    if (u < (q + gap) / 2) return [false, true]
    if (u < q) return [true, false]
    return rng.nextFloat() < 0.5 ? [true, true] : [false, false]
  }
  let rejected = 0
  const blocks: InteractionBlock[] = new Array(n)
  for (let s = 0; s < input.sims; s++) {
    for (let i = 0; i < n; i++) {
      const [baseA, treatA] = draw(g)
      const [baseB, treatB] = draw(-g)
      blocks[i] = { baseA, treatA, baseB, treatB }
    }
    if (pairedInteraction(blocks, { resamples: 1, seed: s, level: 0.95 }).pTwoSided <= input.alpha) rejected++
  }
  return rejected / input.sims
}

/** The CLI's lines. */
export function formatInteractionSizing(r: InteractionSizing, panelBlocks: number): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`
  return [
    `harness × model interaction: ${r.blocks} blocks on both models give ${pct(r.simulated_power)} power (target ${pct(r.power_target)}) to detect an interaction of ${r.interaction_pp} pp`,
    `  (a gap of +${(r.interaction_pp / 2).toFixed(1)} pp on one model and −${(r.interaction_pp / 2).toFixed(1)} pp on the other, discordance ${r.discordance} per model; exact sign-flip test at α = ${r.alpha}, unadjusted; normal approximation ${r.blocks_normal}; ${r.sims} simulated experiments, seed ${r.seed})`,
    `  this panel has ${panelBlocks} comparable block(s): ${panelBlocks >= r.blocks ? 'enough' : `${r.blocks - panelBlocks} short`}`,
    '',
  ].join('\n')
}
