import type { Calibration } from './calibrate.js'

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`
}

/** The calibration as a person reads it: one line per rule, the targets, the design and the model. */
export function formatCalibration(c: Calibration): string {
  const lines = [
    `calibration: ${c.sims} simulated experiments per setting, n = ${c.blocks} blocks, seed ${c.seed}`,
    `model: ${c.model}`,
    `design ${c.design.name}@${c.design.version}: ${c.design.statement}`,
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
  if (c.expected_rerun_usd !== null) {
    lines.push(
      `expected rerun spend per run (A/A, pilot's spend per block): $${c.expected_rerun_usd.toFixed(4)}`,
    )
  }
  for (const w of c.warnings) lines.push(`warning: ${w}`)
  return `${lines.join('\n')}\n`
}
