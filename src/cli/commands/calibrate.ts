import { readFile } from 'node:fs/promises'
import type { Command } from 'commander'
import { calibrate } from '../../calibrate/calibrate.js'
import { formatCalibration } from '../../calibrate/format.js'
import { pilotModel } from '../../calibrate/pilot.js'
import { compareSequential, formatSequential } from '../../calibrate/sequential.js'
import { loadManifest } from '../../manifest/load.js'
import { resolvePanel } from '../../panel/resolve.js'
import { ComparisonSchema } from '../../records/comparison.js'
import { HwError } from '../../util/errors.js'
import { strictJson } from '../../util/json.js'
import { parseIntOption, parseSeedOption } from './plan.js'

export function registerCalibrate(program: Command): void {
  program
    .command('calibrate')
    .description(
      "Simulate the manifest's experiment (A/A and its thresholds as true effects) through the detect rules and the confirmation design: false alarms, false confirmations, power and blocks rerun per rule",
    )
    .argument('<manifest>', 'manifest file (YAML or JSON)')
    .option(
      '--pilot <comparison.json>',
      "resample a pilot run's paired blocks instead of the parametric model",
    )
    .option('--sims <n>', 'simulated experiments per setting', parseSimsOption, 1000)
    .option('--seed <n>', "seed of the simulation (default: the manifest's seed)", parseSeedOption)
    .option(
      '--json',
      'print {"rules":[{"rule","false_alarm_rate","false_confirmation_rate","power","effect",…}],…}',
    )
    .action(async (file: string, opts: { pilot?: string; sims: number; seed?: number; json?: boolean }) => {
      const loaded = await loadManifest(file)
      const m = loaded.manifest
      const panel = await resolvePanel(m, loaded.dir, file, loaded.locate)
      const quarantined = new Set(panel.quarantine)
      const blocks = panel.instances.filter((i) => !quarantined.has(i)).length
      if (blocks < 2) {
        throw new HwError(
          'calibrate_panel_too_small',
          `the panel has ${blocks} comparable block(s); calibration needs at least 2`,
          {
            where: file,
          },
        )
      }
      const pilot = opts.pilot ? await readPilot(opts.pilot) : null
      const total = opts.sims * 9
      let shown = -1
      const result = calibrate({
        blocks,
        thresholds: m.thresholds,
        maxBlocks: m.confirmation.max_blocks,
        alpha: m.confirmation.alpha,
        sims: opts.sims,
        seed: opts.seed ?? m.seed,
        pilot,
        onProgress: (done) => {
          const tenth = Math.floor((10 * done) / total)
          if (tenth !== shown && process.stderr.isTTY) {
            shown = tenth
            process.stderr.write(`\rcalibrating: ${Math.min(100, tenth * 10)}%`)
          }
        },
      })
      if (process.stderr.isTTY && shown >= 0) process.stderr.write('\r\x1b[K')
      // Weekly runs of this panel: the e-value rule across weeks vs one fixed-size exact test.
      const t = m.thresholds.resolved_deficit_pp
      const sequential = [t, 2 * t]
        .filter((d) => (pilot?.rate ?? 0.5) - d / 100 >= 0)
        .flatMap((deficit) =>
          compareSequential({
            blocksPerWeek: blocks,
            resolveRate: pilot?.rate ?? 0.5,
            deficitPp: deficit,
            designDeficitPp: t,
            alpha: m.confirmation.alpha,
            powers: SEQUENTIAL_POWERS,
            horizonWeeks: SEQUENTIAL_HORIZON_WEEKS,
            sims: opts.sims,
            seed: opts.seed ?? m.seed,
            costPerBlock: pilot?.spendPerBlock ?? null,
          }),
        )
      process.stdout.write(
        opts.json
          ? strictJson({ ...result, sequential })
          : `${formatCalibration(result)}${formatSequential(sequential, blocks, t, SEQUENTIAL_HORIZON_WEEKS)}`,
      )
    })
}

/** Power targets and horizon (weeks) of the weekly-evidence comparison. */
const SEQUENTIAL_POWERS = [0.8, 0.9, 0.95]
const SEQUENTIAL_HORIZON_WEEKS = 52

function parseSimsOption(v: string): number {
  const n = parseIntOption(v)
  if (n < 10 || n > 1_000_000) throw new HwError('usage', `--sims is an integer in [10, 1000000], got ${n}`)
  return n
}

async function readPilot(file: string) {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError(
      'calibrate_pilot_invalid',
      `cannot read the pilot: ${(e as NodeJS.ErrnoException).code ?? e}`,
      {
        where: file,
      },
    )
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new HwError('calibrate_pilot_invalid', `the pilot is not JSON: ${(e as Error).message}`, {
      where: file,
    })
  }
  const r = ComparisonSchema.safeParse(value)
  if (!r.success) {
    throw new HwError('calibrate_pilot_invalid', 'the pilot does not match the comparison.json schema', {
      where: file,
      details: r.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
      help: 'pass a comparison.json written by `harness-watch aggregate` or `compare`',
    })
  }
  const model = pilotModel(r.data)
  if (!model) {
    throw new HwError('calibrate_pilot_invalid', 'the pilot has no cost-complete block of a comparison', {
      where: file,
    })
  }
  return model
}
