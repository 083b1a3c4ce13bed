import type { Calibration, WorldCalibration, WorldFileCalibration, WorldRule } from './calibrate.js'

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`
}

const SHORT: Record<string, string> = {
  resolved: 'resolve',
  spend_usd: 'spend',
  input_fresh_tokens: 'fresh input',
  proxy_requests: 'requests',
}

function truthOf(r: WorldRule): string {
  return r.true_deficit_pp !== undefined
    ? `deficit ${r.true_deficit_pp.toFixed(1)} pp`
    : `ratio of means ${r.true_ratio_of_means?.toFixed(3)}×`
}

function shownOf(r: WorldRule): string {
  if (r.mean_shown === null) return 'none confirmed'
  return r.true_deficit_pp !== undefined
    ? `shown ${r.mean_shown.toFixed(1)} pp`
    : `shown ${r.mean_shown.toFixed(3)}× (${((r.shown_over_truth ?? 1) * 100 - 100).toFixed(1)}% vs truth)`
}

function worldLines(w: WorldCalibration): string[] {
  const head = `  ${w.label} [${w.name}]`
  const rates = w.rules.map((r) => `${SHORT[r.rule]} ${pct(r.confirmation_rate)}`).join(', ')
  const first = w.rules[0] as WorldRule
  const conc =
    w.kind !== 'resolve'
      ? `; first-run ratio concentrated on few blocks in ${pct(first.concentrated_rate)}`
      : ''
  return [
    `${head}: ${truthOf(first)}; confirmed ${rates}; breach ${pct(first.breach_rate)}; ${shownOf(first)}${conc}; rerun ${w.mean_rerun_attempts.toFixed(0)} attempts/run`,
  ]
}

/** The calibration as a person reads it: one line per rule, the worlds, the rerun sizes, the design. */
export function formatCalibration(c: Calibration): string {
  const lines = [
    `calibration: ${c.sims} simulated experiments per setting, n = ${c.blocks} blocks, seed ${c.seed}, rerun trials per block ${c.rerun_trials}`,
    `model: ${c.model}`,
    `design ${c.design.name}@${c.design.version}: ${c.design.statement}`,
    'estimands: resolve rule — the resolve-rate difference on these instances; spend, fresh-input and request rules — the ratio of totals Σtreatment/Σbaseline over these instances (tested as such; per-block medians are never the test)',
    '',
    'rule                                false alarm  false confirm  power (true effect)      power at threshold  blocks rerun (A/A · effect)',
  ]
  for (const r of c.rules) {
    const effect = r.effect_unit === 'pp' ? `−${r.effect} pp` : `${r.effect}×`
    const rule = r.effect_unit === 'pp' ? `${r.rule} ≥ ${r.threshold} pp` : `${r.rule} > ${r.threshold}×`
    lines.push(
      `${rule.padEnd(35)} ${pct(r.false_alarm_rate).padStart(6)}       ${pct(r.false_confirmation_rate).padStart(6)}       ${`${pct(r.power)} at ${effect}`.padEnd(22)}   ${pct(r.power_at_threshold).padStart(6)}              ${r.expected_blocks_rerun.aa.toFixed(1)} · ${r.expected_blocks_rerun.at_effect.toFixed(1)}`,
    )
  }
  lines.push(
    `overall (A/A, any rule): false alarm ${pct(c.overall.false_alarm_rate)} per run, false confirmation ${pct(c.overall.false_confirmation_rate)} (target ≤ 5%)`,
  )
  if (c.worst_null) {
    // A resolve-rate deficit at its threshold is not a null (the rule is "≥ threshold"): ratio rules only.
    const defaultFc = Math.max(
      ...c.rules.filter((r) => r.rule !== 'resolved').map((r) => r.power_at_threshold),
      c.overall.false_confirmation_rate,
    )
    lines.push(
      `false confirmations, default world vs worst world: ${pct(defaultFc)} (uniform multiplier at the threshold) · ${pct(c.worst_null.confirmation_rate)} (${c.worst_null.label}, ${SHORT[c.worst_null.rule]} rule) — target ≤ 5% in every world at or below the threshold`,
    )
  }
  if (c.expected_rerun_usd !== null) {
    lines.push(
      `expected rerun spend per run (A/A, pilot's spend per block): $${c.expected_rerun_usd.toFixed(4)}`,
    )
  }
  if (c.worlds) {
    lines.push('', 'worlds at or below the threshold (any confirmation is false; target ≤ 5%):')
    for (const w of c.worlds.filter((x) => x.kind === 'null')) lines.push(...worldLines(w))
    lines.push('', 'worlds with a real cost increase (power):')
    for (const w of c.worlds.filter((x) => x.kind === 'power')) lines.push(...worldLines(w))
    lines.push('', 'resolve-rate worlds (figure shown: the rerun data held out of the decision):')
    for (const w of c.worlds.filter((x) => x.kind === 'resolve')) lines.push(...worldLines(w))
  }
  if (c.rerun_sizes) {
    lines.push(
      '',
      'rerun size at a true uniform 2× spend (blocks × trials per block → power, rerun attempts per run):',
    )
    for (const s of c.rerun_sizes) {
      lines.push(
        `  σ ${s.noise}: ${s.blocks} blocks × ${s.trials} trial${s.trials === 1 ? '' : 's'} → ${pct(s.power)}, ${s.attempts.toFixed(0)} attempts`,
      )
    }
    const r = c.recommendation
    lines.push(
      r
        ? `recommended at run noise σ ${r.noise} for 80% power: ${r.blocks} blocks × ${r.trials} trials per block (confirmation.trials: ${r.trials}${r.blocks > c.blocks ? `, a panel of ${r.blocks} instances` : ''}), about ${r.attempts.toFixed(0)} rerun attempts per run`
        : `no rerun size tried reaches 80% power at run noise σ 0.7: the panel needs more than ${Math.max(...c.rerun_sizes.map((s) => s.blocks))} blocks`,
    )
  }
  for (const w of c.warnings) lines.push(`warning: ${w}`)
  return `${lines.join('\n')}\n`
}

/** A user's world: one line per rule with its truth computed from the file. */
export function formatWorldFile(c: WorldFileCalibration): string {
  const lines = [
    `world ${c.world}: ${c.blocks} instances, run noise σ ${c.noise[0]} baseline / ${c.noise[1]} treatment, ${c.sims} simulated experiments, seed ${c.seed}, rerun trials ${c.rerun_trials}, design ${c.design.name}@${c.design.version} at α = ${c.design.alpha}`,
  ]
  for (const r of c.rules) {
    const rule = r.rule === 'resolved' ? `resolved ≥ ${r.threshold} pp` : `${r.rule} > ${r.threshold}×`
    const over =
      r.true_deficit_pp !== undefined
        ? r.true_deficit_pp >= r.threshold
        : (r.true_ratio_of_means ?? 0) > r.threshold
    lines.push(
      `  ${rule.padEnd(28)} ${truthOf(r)}: confirmed in ${pct(r.confirmation_rate)} of runs (${over ? 'power' : 'a false confirmation'}), breach ${pct(r.breach_rate)}; ${shownOf(r)}`,
    )
  }
  return `${lines.join('\n')}\n`
}
