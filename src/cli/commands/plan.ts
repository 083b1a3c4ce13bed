import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Command } from 'commander'
import { loadManifest } from '../../manifest/load.js'
import { assertScriptsExist } from '../../manifest/scripts.js'
import { resolvePanel } from '../../panel/resolve.js'
import { panelTasks, taskNetworkNotes } from '../../pipeline/task-network.js'
import { buildPlan } from '../../plan/plan.js'
import { legTimeoutWarning } from '../../plan/timeouts.js'
import { MAX_SEED } from '../../stats/index.js'
import { HwError } from '../../util/errors.js'
import { strictJson } from '../../util/json.js'
import { quotePath } from '../../util/paths.js'

export function registerPlan(program: Command): void {
  program
    .command('plan')
    .description('Turn a manifest into plan.json and a GitHub Actions job matrix (cells × shards)')
    .argument('<manifest>', 'manifest file (YAML or JSON)')
    .option('--out <dir>', 'folder to write plan.json into', 'hw-out')
    .option('--seed <n>', `override the manifest seed (an integer from 0 to ${MAX_SEED})`, parseSeedOption)
    .option('--cells <ids>', 'comma-separated cells to plan (others are skipped; "" plans none)')
    .option('--matrix', 'print the matrix JSON on stdout')
    .action(async (file: string, opts: { out: string; seed?: number; cells?: string; matrix?: boolean }) => {
      const loaded = await loadManifest(file, { runnable: true })
      assertScriptsExist(loaded.manifest, file, process.cwd(), loaded.locate)
      const panel = await resolvePanel(loaded.manifest, loaded.dir, file, loaded.locate)
      const plan = buildPlan(loaded, panel, {
        seed: opts.seed,
        // An explicit but empty --cells (a "changed cells only" filter that matched none) plans no
        // cell, never every cell.
        cells:
          opts.cells !== undefined
            ? opts.cells
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean)
            : undefined,
      })
      const timeout = legTimeoutWarning(plan)
      if (timeout) process.stderr.write(`warning: ${timeout}\n`)
      if (loaded.manifest.sandbox.backend === 'container') {
        const tasks = await panelTasks(panel.tasksDir, plan.panel.instances)
        for (const w of taskNetworkNotes(loaded.manifest.sandbox, tasks).warnings)
          process.stderr.write(`warning: ${w}\n`)
      }
      await mkdir(opts.out, { recursive: true })
      const out = path.join(opts.out, 'plan.json')
      await writeFile(out, strictJson(plan))
      if (opts.matrix) {
        process.stdout.write(`${JSON.stringify(plan.matrix)}\n`)
      } else {
        const note = plan.shards.note ? ` (${plan.shards.note})` : ''
        if (plan.legs.length === 0) {
          process.stdout.write(
            `no cells scheduled: --cells selected none of ${loaded.manifest.cells.map((c) => c.id).join(', ')}; ` +
              `the matrix is empty (guard the run job on has-work)\nwrote ${quotePath(out)}\n`,
          )
          return
        }
        process.stdout.write(
          `planned ${plan.legs.length} legs: ${plan.cells.length} cells × ${plan.shards.count} shards, ` +
            `${plan.panel.instances.length} instances × ${plan.trials} trial(s)${note}\nwrote ${quotePath(out)}\n`,
        )
      }
    })
}

export function parseIntOption(v: string): number {
  const n = Number(v)
  if (v.trim() === '' || !Number.isInteger(n)) throw new HwError('usage', `expected an integer, got "${v}"`)
  return n
}

/**
 * A seed: an integer from 0 to MAX_SEED, as the manifest's. The bootstrap takes a 32-bit seed, so any
 * other value would be taken modulo 2³² (-3 would run as 4294967293): refused instead.
 */
export function parseSeedOption(v: string): number {
  const n = parseIntOption(v)
  if (n < 0 || n > MAX_SEED)
    throw new HwError('usage', `a seed is an integer from 0 to ${MAX_SEED}, got ${n}`)
  return n
}
