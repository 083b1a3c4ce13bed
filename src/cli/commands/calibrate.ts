import { readFile } from 'node:fs/promises'
import type { Command } from 'commander'
import { calibrate, calibrateWorldFile } from '../../calibrate/calibrate.js'
import { formatCalibration, formatWorldFile } from '../../calibrate/format.js'
import { compareDesigns, formatDesigns } from '../../calibrate/group-sequential.js'
import { formatInteractionSizing, sizeInteraction } from '../../calibrate/interaction.js'
import { PilotNoiseUnknown, pilotModel } from '../../calibrate/pilot.js'
import { parseWorldFile } from '../../calibrate/world-file.js'
import { DEFAULT_DESIGN } from '../../detect/designs/registry.js'
import { loadManifest } from '../../manifest/load.js'
import { isMultiModel } from '../../manifest/schema.js'
import { resolvePanel } from '../../panel/resolve.js'
import type { Comparison } from '../../records/comparison.js'
import { ComparisonSchema } from '../../records/comparison.js'
import { HwError } from '../../util/errors.js'
import { strictJson } from '../../util/json.js'
import { parseIntOption, parseSeedOption } from './plan.js'

interface CalibrateOpts {
  pilot?: string
  pilotRerun?: string
  world?: string
  noise?: number
  sims: number
  seed?: number
  json?: boolean
  interaction?: number
  discordance?: number
}

export function registerCalibrate(program: Command): void {
  program
    .command('calibrate')
    .description(
      "Simulate the manifest's experiment through the detect rules and the confirmation design in a family of cost worlds (uniform, fixed overhead, runaway, heterogeneous, unequal noise): false confirmations, power, the figure shown, rerun sizes and weekly designs",
    )
    .argument('<manifest>', 'manifest file (YAML or JSON)')
    .option(
      '--world <file.jsonl>',
      'simulate your own cost structure: one line per instance, {"instance","p":[base,treat],"spend_usd":[mean,mean],"input_fresh_tokens":[..],"requests":[..]}',
    )
    .option('--noise <σ>', 'run-to-run noise σ per attempt on log cost (default 0.35)', parseNoiseOption)
    .option(
      '--pilot <comparison.json>',
      "resample a pilot run's paired blocks instead of the parametric model (needs --pilot-rerun or --noise)",
    )
    .option(
      '--pilot-rerun <comparison.json>',
      'a second run of the pilot panel: its rerun pairs measure the run-to-run noise of each cell',
    )
    .option(
      '--interaction <pp>',
      'size the harness × model interaction test instead: blocks on both models for 80% power to detect an interaction of this many points',
      parseInteractionOption,
    )
    .option(
      '--discordance <q>',
      'with --interaction: share of discordant blocks within one model (default 0.2)',
      parseDiscordanceOption,
    )
    .option('--sims <n>', 'simulated experiments per setting', parseSimsOption, 1000)
    .option('--seed <n>', "seed of the simulation (default: the manifest's seed)", parseSeedOption)
    .option(
      '--json',
      'print {"rules":[{"rule","false_alarm_rate","false_confirmation_rate","power",…}],"worlds":[…],…}; with --world, {"rules":[{"rule","confirmation_rate","true_ratio_of_means"|"true_deficit_pp"}]}',
    )
    .action(async (file: string, opts: CalibrateOpts) => {
      const loaded = await loadManifest(file)
      const m = loaded.manifest
      const panel = await resolvePanel(m, loaded.dir, file, loaded.locate)
      const quarantined = new Set(panel.quarantine)
      const comparable = panel.instances.filter((i) => !quarantined.has(i))
      const blocks = comparable.length
      const seed = opts.seed ?? m.seed
      if (opts.interaction !== undefined) {
        const sizing = sizeInteraction({
          interactionPp: opts.interaction,
          discordance: opts.discordance ?? 0.2,
          alpha: 0.05,
          power: 0.8,
          sims: Math.min(opts.sims, 2000),
          seed,
        })
        process.stdout.write(
          opts.json
            ? strictJson({ interaction: sizing, panel_blocks: blocks })
            : formatInteractionSizing(sizing, blocks),
        )
        // The sizing holds for any panel, but only a manifest with cells on two models runs the test.
        if (!isMultiModel(m))
          process.stderr.write(
            `note: ${file} declares one model for every cell: no interaction is estimated until cells name two models (models: and cells[].model)\n`,
          )
        return
      }
      if (opts.discordance !== undefined) throw new HwError('usage', '--discordance needs --interaction')
      const progress = progressPrinter()
      if (opts.world) {
        if (opts.pilot)
          throw new HwError('usage', '--world and --pilot are two ways to give a world: pass one')
        const text = await readText(opts.world, 'calibrate_world_invalid', 'the world file')
        const world = parseWorldFile(text, opts.world, panel.instances)
        const noise = opts.noise ?? 0.35
        const result = calibrateWorldFile(world, {
          thresholds: m.thresholds,
          maxBlocks: m.confirmation.max_blocks,
          alpha: m.confirmation.alpha,
          sims: opts.sims,
          seed,
          rerunTrials: m.confirmation.trials ?? DEFAULT_DESIGN.trials,
          noise: [noise, noise],
          onProgress: progress.update,
        })
        progress.done()
        process.stdout.write(
          opts.json
            ? strictJson({
                rules: result.rules.map((r) => ({
                  rule: r.rule,
                  confirmation_rate: r.confirmation_rate,
                  ...(r.true_deficit_pp !== undefined
                    ? { true_deficit_pp: r.true_deficit_pp }
                    : { true_ratio_of_means: r.true_ratio_of_means }),
                })),
                details: result,
              })
            : formatWorldFile(result),
        )
        return
      }
      if (blocks < 2) {
        throw new HwError(
          'calibrate_panel_too_small',
          `the panel has ${blocks} comparable block(s); calibration needs at least 2`,
          { where: file },
        )
      }
      const pilot = opts.pilot
        ? await readPilot(opts.pilot, opts.pilotRerun ?? null, opts.noise ?? null)
        : null
      if (!opts.pilot && opts.pilotRerun)
        throw new HwError('usage', '--pilot-rerun needs --pilot (the first run of the pilot panel)')
      const result = calibrate({
        blocks,
        thresholds: m.thresholds,
        maxBlocks: m.confirmation.max_blocks,
        alpha: m.confirmation.alpha,
        sims: opts.sims,
        seed,
        pilot,
        rerunTrials: m.confirmation.trials ?? DEFAULT_DESIGN.trials,
        family: true,
        ...(opts.noise !== undefined ? { spec: { noise: opts.noise } } : {}),
        onProgress: progress.update,
      })
      progress.done()
      const designs = compareDesigns({
        blocksPerWeek: blocks,
        resolveRate: pilot?.rate ?? 0.5,
        deficitPp: m.thresholds.resolved_deficit_pp,
        alpha: m.confirmation.alpha,
        power: 0.9,
        horizonWeeks: 52,
        sims: Math.max(opts.sims, 200),
        seed,
        costPerBlock: pilot?.spendPerBlock ?? null,
      })
      process.stdout.write(
        opts.json
          ? strictJson({ ...result, weekly: designs })
          : `${formatCalibration(result)}${formatDesigns(designs)}`,
      )
    })
}

function progressPrinter(): { update: (done: number, total: number) => void; done: () => void } {
  let shown = -1
  return {
    update: (done, total) => {
      const tenth = Math.floor((10 * done) / total)
      if (tenth !== shown && process.stderr.isTTY) {
        shown = tenth
        process.stderr.write(`\rcalibrating: ${Math.min(100, tenth * 10)}%`)
      }
    },
    done: () => {
      if (process.stderr.isTTY && shown >= 0) process.stderr.write('\r\x1b[K')
    },
  }
}

function parseSimsOption(v: string): number {
  const n = parseIntOption(v)
  if (n < 10 || n > 1_000_000) throw new HwError('usage', `--sims is an integer in [10, 1000000], got ${n}`)
  return n
}

function parseNoiseOption(v: string): number {
  const x = Number(v)
  if (!(v.trim() !== '' && Number.isFinite(x) && x >= 0 && x <= 3))
    throw new HwError('usage', `--noise is a run-to-run σ on log cost in [0, 3], got ${JSON.stringify(v)}`)
  return x
}

async function readText(file: string, code: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError(code, `cannot read ${what}: ${(e as NodeJS.ErrnoException).code ?? e}`, { where: file })
  }
}

async function readComparison(file: string, what: string): Promise<Comparison> {
  const text = await readText(file, 'calibrate_pilot_invalid', what)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    throw new HwError('calibrate_pilot_invalid', `${what} is not JSON: ${(e as Error).message}`, {
      where: file,
    })
  }
  const r = ComparisonSchema.safeParse(value)
  if (!r.success) {
    throw new HwError('calibrate_pilot_invalid', `${what} does not match the comparison.json schema`, {
      where: file,
      details: r.error.issues.slice(0, 10).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`),
      help: 'pass a comparison.json written by `harness-watch aggregate` or `compare`',
    })
  }
  return r.data
}

async function readPilot(file: string, rerunFile: string | null, noise: number | null) {
  const first = await readComparison(file, 'the pilot')
  const rerun = rerunFile ? await readComparison(rerunFile, 'the pilot rerun') : null
  try {
    const model = pilotModel(first, rerun, noise)
    if (!model) {
      throw new HwError('calibrate_pilot_invalid', 'the pilot has no cost-complete block of a comparison', {
        where: file,
      })
    }
    return model
  } catch (e) {
    if (!(e instanceof PilotNoiseUnknown)) throw e
    throw new HwError('calibrate_pilot_noise_unknown', `cannot estimate the run-to-run noise: ${e.message}`, {
      where: rerunFile ?? file,
      help: 'pass --pilot-rerun <comparison.json> (a second run of the same panel and cells) or --noise <σ> (e.g. --noise 0.5)',
    })
  }
}

function parseInteractionOption(raw: string): number {
  const v = Number(raw)
  if (!Number.isFinite(v) || v <= 0 || v > 200) {
    throw new HwError(
      'usage',
      `--interaction must be a number of points above 0 and at most 200, got "${raw}"`,
    )
  }
  return v
}

function parseDiscordanceOption(raw: string): number {
  const v = Number(raw)
  if (!Number.isFinite(v) || v <= 0 || v > 1) {
    throw new HwError('usage', `--discordance must be a share in (0, 1], got "${raw}"`)
  }
  return v
}
