// The per-stage tests of the ratio of totals compared through the two-stage confirmation design
// (src/detect/designs/two-stage.ts): false confirmations in every null world of calibrate
// (src/calibrate/worlds.ts) and power in every 2× world, 1,000 simulated 40-block experiments per world
// and candidate, worst of the three ratio rules with its Monte Carlo standard error. The table in
// two-stage.ts's comment comes from this run. Run: npm run bench -- totals-tests
import { NO_EFFECT } from '../src/calibrate/scenario.js'
import { runScenario } from '../src/calibrate/simulate.js'
import { nullWorlds, powerWorlds } from '../src/calibrate/worlds.js'
import { type StageTest, twoStageWith } from '../src/detect/designs/two-stage.js'
import { ThresholdsSchema } from '../src/manifest/schema.js'

const SIMS = 1000
const CANDIDATES: Array<[string, StageTest, 'all' | 'first-five']> = [
  ['student', { method: 'student', pooledSd: false }, 'all'],
  ['johnson', { method: 'johnson', pooledSd: false }, 'all'],
  ['hall', { method: 'hall', pooledSd: false }, 'all'],
  ['sign-flip', { method: 'sign-flip', pooledSd: false }, 'all'],
  // B = 999 resamples per stage test: the slowest; the first five null worlds show it.
  ['bootstrap-t', { method: 'bootstrap-t', pooledSd: false }, 'first-five'],
  ['johnson-down', { method: 'johnson-down', pooledSd: false }, 'all'],
  ['student, floored', { method: 'student', pooledSd: true }, 'all'],
  ['johnson-down, floored (chosen)', { method: 'johnson-down', pooledSd: true }, 'all'],
]
const theta = { spend_usd: 1.5, input_fresh_tokens: 1.5, proxy_requests: 1.5 }
const pct = (x: number) => `${(100 * x).toFixed(1)}%`
for (const [name, test, scope] of CANDIDATES) {
  const policy = {
    thresholds: ThresholdsSchema.parse({}),
    maxBlocks: 50,
    alpha: 0.05,
    design: twoStageWith(test),
  }
  const worlds = [
    ...nullWorlds(theta).map((w, k) => ({ w, k, kind: 'null' })),
    ...powerWorlds().map((w, k) => ({ w, k, kind: 'power' })),
  ].filter((_, i) => scope === 'all' || i < 5)
  console.log(`\n${name}`)
  for (const { w, k, kind } of worlds) {
    const r = runScenario((_e, rng) => w.make(40, rng), NO_EFFECT, policy, SIMS, 1 + k * 7919)
    const rates = [r.confirmed.spend_usd, r.confirmed.input_fresh_tokens, r.confirmed.proxy_requests]
    const worst = kind === 'null' ? Math.max(...rates) : Math.min(...rates)
    const se = Math.sqrt((worst * (1 - worst)) / SIMS)
    const verdict = kind === 'null' ? (worst <= 0.05 ? 'met' : 'MISSED') : ''
    console.log(
      `  ${kind === 'null' ? 'false confirmations' : 'power'}, ${w.label}: ${rates.map(pct).join(' / ')}; ${kind === 'null' ? 'worst' : 'least'} ${pct(worst)} ± ${pct(se)} ${verdict}`,
    )
  }
}
