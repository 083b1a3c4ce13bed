// The per-stage tests of the ratio of totals compared through the two-stage confirmation design
// (src/detect/designs/two-stage.ts): false confirmations in every null world of calibrate
// (src/calibrate/worlds.ts) and power in every 2× world, 1,000 simulated 40-block experiments per world
// and candidate, worst of the three ratio rules with its Monte Carlo standard error. The table in
// two-stage.ts's comment comes from this run. Run: npm run bench -- totals-tests
import { NO_EFFECT } from '../src/calibrate/scenario.js'
import { runScenario } from '../src/calibrate/simulate.js'
import { nullWorlds, powerWorlds } from '../src/calibrate/worlds.js'
import { DEFAULT_TEST, type StageTest, twoStageWith } from '../src/detect/designs/two-stage.js'
import { ThresholdsSchema } from '../src/manifest/schema.js'

const SIMS = 1000
type Scope = 'all' | 'first-five' | 'two'
const CANDIDATES: Array<[string, StageTest, Scope, number]> = [
  // Version 4: the default splits each block's trials (three of four decide); two trials split one
  // and one. (Two and two of four was measured with the split fixed at ⌊k/2⌋.)
  ...[2, 4].map((k): [string, StageTest, Scope, number] => [
    `v4, ${k} trials`,
    { ...DEFAULT_TEST, trials: k },
    'all',
    k,
  ]),
  ['v4 as version 3 (blocks split, four trials)', { ...DEFAULT_TEST, splitTrials: false }, 'all', 4],
  // The default (version 4) at its four rerun trials.
  ['version 4 (default)', DEFAULT_TEST, 'all', DEFAULT_TEST.trials ?? 1],
  [
    'v3 with johnson-critical',
    { ...DEFAULT_TEST, splitTrials: false, method: 'johnson-critical' },
    'all',
    DEFAULT_TEST.trials ?? 1,
  ],
  [
    'v3 with hall-down',
    { ...DEFAULT_TEST, splitTrials: false, method: 'hall-down' },
    'all',
    DEFAULT_TEST.trials ?? 1,
  ],
  [
    'v3 with johnson-down',
    { ...DEFAULT_TEST, splitTrials: false, method: 'johnson-down' },
    'all',
    DEFAULT_TEST.trials ?? 1,
  ],
  ['student', { method: 'student', pooledSd: false }, 'all', 1],
  ['johnson', { method: 'johnson', pooledSd: false }, 'all', 1],
  ['hall', { method: 'hall', pooledSd: false }, 'all', 1],
  ['sign-flip', { method: 'sign-flip', pooledSd: false }, 'all', 1],
  // B = 999 resamples per stage test: the slowest; the first five null worlds show it.
  ['bootstrap-t', { method: 'bootstrap-t', pooledSd: false }, 'first-five', 1],
  ['johnson-down', { method: 'johnson-down', pooledSd: false }, 'all', 1],
  ['student, floored', { method: 'student', pooledSd: true }, 'all', 1],
  ['johnson-down, floored (version 2)', { method: 'johnson-down', pooledSd: true }, 'all', 1],
  // More rerun trials and designs that use them (the two worlds that bind: uniform 2× power and
  // the σ 1.0 baseline / 0.35 treatment null world).
  ...[2, 3, 4].map((k): [string, StageTest, Scope, number] => [
    `version 2, ${k} trials`,
    { method: 'johnson-down', pooledSd: true },
    'two',
    k,
  ]),
  ...[3, 4].flatMap(
    (k): Array<[string, StageTest, Scope, number]> => [
      [
        `+ weights √(blocks × trials), ${k} trials`,
        { method: 'johnson-down', pooledSd: true, attemptWeights: true },
        'two',
        k,
      ],
      [
        `+ floor × √k, ${k} trials`,
        { method: 'johnson-down', pooledSd: true, attemptWeights: true, floorScale: 'sqrt-trials' },
        'two',
        k,
      ],
      [
        `without the floor, ${k} trials`,
        { method: 'johnson-down', pooledSd: false, attemptWeights: true },
        'two',
        k,
      ],
      [
        `+ floor × √k, a third held out, ${k} trials`,
        {
          method: 'johnson-down',
          pooledSd: true,
          attemptWeights: true,
          floorScale: 'sqrt-trials',
          estimateShare: 1 / 3,
        },
        'two',
        k,
      ],
    ],
  ),
  [
    'log-ratio, floor × √k, 3 trials',
    { method: 'log-ratio', pooledSd: true, attemptWeights: true, floorScale: 'sqrt-trials' },
    'two',
    3,
  ],
  // The combined statistic's null from each arm's run-to-run spread (first run against the rerun of
  // the same blocks), a seeded lognormal parametric null (stats/totals-null.ts), B = 199.
  [
    'student, lognormal null',
    { method: 'student', pooledSd: false, calibration: 'lognormal-null' },
    'all',
    1,
  ],
  [
    'chosen, lognormal null',
    { method: 'johnson-down', pooledSd: true, calibration: 'lognormal-null' },
    'all',
    1,
  ],
  ...[2, 3].map((k): [string, StageTest, Scope, number] => [
    `student, lognormal null, weights √(blocks × trials), ${k} trials`,
    { method: 'student', pooledSd: false, attemptWeights: true, calibration: 'lognormal-null' },
    'all',
    k,
  ]),
  ...[0, 0.25, 0.5].flatMap(
    (g): Array<[string, StageTest, Scope, number]> => [
      [`student, noise-model floor g ${g}`, { method: 'student', pooledSd: false, noiseFloor: g }, 'all', 1],
      [
        `student, noise-model floor g ${g}, weights √(blocks × trials), 3 trials`,
        { method: 'student', pooledSd: false, noiseFloor: g, attemptWeights: true },
        'all',
        3,
      ],
      [
        `student, noise-model floor g ${g}, the whole rerun decides`,
        { method: 'student', pooledSd: false, noiseFloor: g, estimateShare: 0 },
        'all',
        1,
      ],
    ],
  ),
  ...[0.25, 0.5].flatMap(
    (g): Array<[string, StageTest, Scope, number]> => [
      ...[3, 4].map((k): [string, StageTest, Scope, number] => [
        `johnson-down, noise-model floor g ${g}, weights √(blocks × trials), ${k} trials`,
        { method: 'johnson-down', pooledSd: false, noiseFloor: g, attemptWeights: true },
        'all',
        k,
      ]),
      [
        `johnson-down, stages floored × √k, noise-model floor g ${g}, weights √(blocks × trials), 3 trials`,
        {
          method: 'johnson-down',
          pooledSd: true,
          floorScale: 'sqrt-trials',
          noiseFloor: g,
          attemptWeights: true,
        },
        'all',
        3,
      ],
    ],
  ),
  ...(['first', 'all'] as const).flatMap((by) =>
    [3, 4].flatMap((k) =>
      [0.25, 0.5].map((g): [string, StageTest, Scope, number] => [
        `johnson-down, noise-model floor g ${g}, weights √(blocks × trials), halves matched on ${by === 'first' ? "the first ratio signal's" : "every ratio signal's"} D, ${k} trials`,
        { method: 'johnson-down', pooledSd: false, noiseFloor: g, attemptWeights: true, balancedSplit: by },
        'all',
        k,
      ]),
    ),
  ),
  [
    "version 3 with halves matched on every ratio signal's log ratio",
    { ...DEFAULT_TEST, splitTrials: false, balancedSplit: 'all-log' },
    'all',
    4,
  ],
  ...[4, 5].map((k): [string, StageTest, Scope, number] => [
    `student, noise-model floor g 0.5, weights √(blocks × trials), halves matched on every ratio signal's D, ${k} trials`,
    { method: 'student', pooledSd: false, noiseFloor: 0.5, attemptWeights: true, balancedSplit: 'all' },
    'all',
    k,
  ]),
  [
    'student, lognormal null, the whole rerun decides',
    { method: 'student', pooledSd: false, calibration: 'lognormal-null', estimateShare: 0 },
    'all',
    1,
  ],
]
// Narrowing while exploring: npx tsx bench/totals-tests.ts [candidate substring] [two]
const only = process.argv[2]
const narrow = process.argv[3] === 'two' || process.argv[3] === 'three'
const TWO = new Set([
  'uniform-2x',
  'unequal-noise-base-at-threshold',
  ...(process.argv[3] === 'three' ? ['overhead-at-threshold', 'heterogeneous-2x'] : []),
])
const theta = { spend_usd: 1.5, input_fresh_tokens: 1.5, proxy_requests: 1.5 }
const pct = (x: number) => `${(100 * x).toFixed(1)}%`
for (const [name, test, scope, trials] of CANDIDATES.filter(([n]) => !only || n.includes(only))) {
  const policy = {
    thresholds: ThresholdsSchema.parse({}),
    maxBlocks: 50,
    alpha: 0.05,
    design: twoStageWith(test),
    rerunTrials: trials,
  }
  const worlds = [
    ...nullWorlds(theta).map((w, k) => ({ w, k, kind: 'null' })),
    ...powerWorlds().map((w, k) => ({ w, k, kind: 'power' })),
  ].filter(({ w }, i) => (narrow || scope === 'two' ? TWO.has(w.name) : scope === 'all' || i < 5))
  console.log(`\n${name}`)
  for (const { w, k, kind } of worlds) {
    const r = runScenario((_e, rng) => w.make(40, rng), NO_EFFECT, policy, SIMS, 1 + k * 7919)
    const rates = [r.confirmed.spend_usd, r.confirmed.input_fresh_tokens, r.confirmed.proxy_requests]
    const worst = kind === 'null' ? Math.max(...rates) : Math.min(...rates)
    const se = Math.sqrt((worst * (1 - worst)) / SIMS)
    const over = [
      r.meanShownOverTruth.spend_usd,
      r.meanShownOverTruth.input_fresh_tokens,
      r.meanShownOverTruth.proxy_requests,
    ]
    const bias = over.every((x) => x !== null)
      ? `; shown/truth ${over.map((x) => (x as number).toFixed(3)).join(' / ')}`
      : ''
    const verdict = kind === 'null' ? (worst <= 0.05 ? 'met' : 'MISSED') : bias
    console.log(
      `  ${kind === 'null' ? 'false confirmations' : 'power'}, ${w.label}: ${rates.map(pct).join(' / ')}; ${kind === 'null' ? 'worst' : 'least'} ${pct(worst)} ± ${pct(se)} ${verdict}`,
    )
  }
}
