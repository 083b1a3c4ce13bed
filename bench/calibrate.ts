// `harness-watch calibrate`'s full table and its speed: 1,000 simulated experiments per setting of a
// 40-block, 2-cell experiment with the schema's default thresholds, through the detect rules and the
// confirmation design, in every world of src/calibrate/worlds.ts (uniform, fixed overhead, runaway
// instances and attempts, heterogeneous effects, unequal noise up to σ 1.0), the rerun sizes, and the
// weekly designs (fixed, group-sequential, e-value). Target: ≤ 60 s on the 2-core reference machine.
// Prints each issue-25 target as met or MISSED. Run: npm run bench -- calibrate [sims]
import { spawn } from 'node:child_process'
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { type CalibrateInput, type Calibration, calibrate } from '../src/calibrate/calibrate.js'
import { formatCalibration } from '../src/calibrate/format.js'
import { compareDesigns, formatDesigns } from '../src/calibrate/group-sequential.js'
import { ThresholdsSchema } from '../src/manifest/schema.js'

const TARGET_S = 60
const sims = Number(process.argv[2] ?? 1000)
const input = (parts: CalibrateInput['parts']): CalibrateInput => ({
  blocks: 40,
  thresholds: ThresholdsSchema.parse({}),
  maxBlocks: 50,
  alpha: 0.05,
  sims,
  seed: 1,
  family: true,
  parts,
})

// Two cores: the null and resolve worlds with the default table in one process, the power worlds and
// the rerun sizes in another; each part is seeded on its own, so the merge is deterministic.
if (process.argv[3] === '--part') {
  const parts = (process.argv[4] ?? '').split(',') as NonNullable<CalibrateInput['parts']>
  const c = calibrate(input(parts))
  const u = process.cpuUsage()
  process.stdout.write(JSON.stringify({ ...c, cpu_s: (u.user + u.system) / 1e6 }))
  process.exit(0)
}
const t0 = performance.now()
const self = fileURLToPath(import.meta.url)
const part = (parts: string) =>
  new Promise<Calibration>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', self, String(sims), '--part', parts], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
    })
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as Calibration)
        : reject(new Error(`part ${parts} exited ${code}`)),
    )
  })
const [a, b] = await Promise.all([part('null,resolve'), part('power,sizes')])
const cpuOf = (x: Calibration) => (x as Calibration & { cpu_s?: number }).cpu_s ?? 0
const designs = compareDesigns({
  blocksPerWeek: 40,
  resolveRate: 0.5,
  deficitPp: 10,
  alpha: 0.05,
  power: 0.9,
  horizonWeeks: 52,
  sims: Math.max(sims, 2000),
  seed: 1,
  costPerBlock: null,
})
const order = { null: 0, power: 1, resolve: 2 }
const c: Calibration = {
  ...a,
  worlds: [...(a.worlds ?? []), ...(b.worlds ?? [])].sort((x, y) => order[x.kind] - order[y.kind]),
  rerun_sizes: b.rerun_sizes,
  recommendation: b.recommendation,
  warnings: [...new Set([...a.warnings, ...b.warnings])],
}
const s = (performance.now() - t0) / 1000
const self0 = process.cpuUsage()
const cpu = cpuOf(a) + cpuOf(b)
process.stdout.write(formatCalibration(c))
process.stdout.write(formatDesigns(designs))

const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED')
const pct = (x: number) => `${(100 * x).toFixed(1)}%`
const worlds = c.worlds ?? []
const world = (name: string) => worlds.find((w) => w.name === name)
console.log('')
console.log(
  `calibrate ${sims} sims per setting, n = 40: ${s.toFixed(1)} s wall (target ≤ ${TARGET_S} s: ${verdict(s <= TARGET_S)}), CPU ${(cpu + (self0.user + self0.system) / 1e6).toFixed(1)} s (the two simulation processes ${cpu.toFixed(1)} s); load average ${os.loadavg()[0]!.toFixed(1)} on ${os.availableParallelism()} cores`,
)
for (const w of worlds.filter((x) => x.kind === 'null')) {
  const worst = Math.max(...w.rules.map((r) => r.confirmation_rate))
  console.log(`false confirmations, ${w.label}: ${pct(worst)} (target ≤ 5%: ${verdict(worst <= 0.05)})`)
}
const u2 = world('uniform-2x')?.rules.find((r) => r.rule === 'spend_usd')
console.log(
  `power at a uniform 2× spend, σ 0.35, confirmation.trials ${c.rerun_trials}: ${pct(u2?.confirmation_rate ?? 0)} (target ≥ 90%: ${verdict((u2?.confirmation_rate ?? 0) >= 0.9)})`,
)
for (const r of (c.rerun_sizes ?? []).filter((x) => x.noise === 0.35)) {
  console.log(
    `  with ${r.trials} rerun trial(s) per block: ${pct(r.power)} at ${r.attempts.toFixed(0)} rerun attempts per run`,
  )
}
const rec = c.recommendation
console.log(
  rec
    ? `σ 0.7: ${rec.blocks} blocks × ${rec.trials} trials reach ${pct(rec.power)} (80% target) at ${rec.attempts.toFixed(0)} rerun attempts per run`
    : 'σ 0.7: no rerun size tried reaches 80% power',
)
const runaway = world('runaway-instances-2x')?.rules.find((r) => r.rule === 'spend_usd')
console.log(
  `runaway instances (5% at ~20×, ratio 2×): power ${pct(runaway?.confirmation_rate ?? 0)}; the first-run ratio is named as concentrated in ${pct(runaway?.concentrated_rate ?? 0)} of runs`,
)
const d20 = world('resolve-deficit-20')?.rules[0]
const shown = d20?.mean_shown ?? Number.NaN
console.log(
  `true −20 pp: confirmed ${pct(d20?.confirmation_rate ?? 0)}, mean deficit shown ${shown.toFixed(2)} pp (target within ±1.5 of −20: ${verdict(Math.abs(shown + 20) <= 1.5)})`,
)
for (const w of worlds.filter((x) => x.kind === 'power')) {
  const r = w.rules.find((x) => x.rule === 'spend_usd')
  if (r?.shown_over_truth == null) continue
  const off = r.shown_over_truth - 1
  const se = r.shown_over_truth_se
  const runs = Math.round(r.confirmation_rate * sims)
  // Under 30 confirmed runs the mean rests on too few to judge against ±5% (its s.e. says how few).
  const judged = runs < 30 ? `too few confirmed runs to judge (${runs})` : verdict(Math.abs(off) <= 0.05)
  console.log(
    `confirmed ratio shown vs truth, ${w.label}: ${(100 * off).toFixed(1)}%${se != null ? ` ± ${(100 * se).toFixed(1)}` : ''} over ${runs} confirmed runs (target within 5%: ${judged})`,
  )
}
const chosen = designs.rows.find((r) => r.design === designs.chosen)
if (chosen) {
  console.log(
    `weekly, ${designs.chosen}: ${pct(chosen.saving_h1)} fewer expected blocks than fixed under H1 (target ≥ 20%: ${verdict(chosen.saving_h1 >= 0.2)}), ${pct(-chosen.saving_h0)} more under H0 (target ≤ 10%: ${verdict(-chosen.saving_h0 <= 0.1)})`,
  )
}
if (s > TARGET_S) process.exitCode = 1
