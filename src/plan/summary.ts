import { HARNESSES, isHarnessName } from '../manifest/harness-names.js'
import type { LoadedManifest } from '../manifest/load.js'
import { harnessKey } from '../manifest/models.js'
import {
  cellApi,
  cellRoute,
  declaredRoutes,
  isMultiModel,
  type ModelRoute,
  treatmentIds,
} from '../manifest/schema.js'
import { describeContract, verifierContract } from '../panel/contract.js'
import type { ResolvedPanel } from '../panel/resolve.js'
import { quotePath } from '../util/paths.js'
import type { Plan } from './schema.js'

/** A one-screen, plain-text summary of a validated manifest (what `harness-watch validate` prints). */
export function summarizeManifest(loaded: LoadedManifest, panel: ResolvedPanel, plan?: Plan): string {
  const m = loaded.manifest
  const routeLine = (r: ModelRoute): string => {
    const prices = r.prices
      ? `$${r.prices.input}/$${r.prices.output} per Mtok in/out, cache read ${r.prices.cache_read ?? 'n/a'}, write ${r.prices.cache_write ?? 'n/a'}`
      : 'unpriced (spend will be unknown)'
    return `${r.id} via ${r.provider} (${r.api} API); ${prices}`
  }
  const routes = declaredRoutes(m)
  // Several models: each model's baseline is its cell running the baseline's harness configuration.
  const multi = isMultiModel(m)
  const base = m.cells.find((c) => c.id === m.baseline)
  // A model none of whose cells runs the baseline's configuration has no baseline: nothing on it is compared.
  const routeOf = (c: (typeof m.cells)[number]) => c.model ?? null
  const baseKey = base ? harnessKey(base) : null
  const orphaned = multi
    ? [...new Set(m.cells.map(routeOf))].filter(
        (r) => !m.cells.some((c) => routeOf(c) === r && (c.id === m.baseline || harnessKey(c) === baseKey)),
      )
    : []
  const modelLines =
    routes.length === 1 && routes[0]?.name === null
      ? [`model       ${routeLine(routes[0].route)}`]
      : routes.map((r) => `model       ${(r.name ?? '(default)').padEnd(12)} ${routeLine(r.route)}`)
  const shards = 'count' in m.shards ? `${m.shards.count} shard(s)` : `shards of ${m.shards.size}`
  const lines = [
    `${quotePath(loaded.file)}: valid (schema_version ${m.schema_version}, sha256 ${loaded.sha256.slice(0, 12)})`,
    `experiment  ${m.experiment.id}${m.experiment.description ? ` — ${m.experiment.description}` : ''}`,
    ...modelLines,
    `benchmark   ${m.benchmark.family}@${m.benchmark.revision}; verifier ${m.benchmark.verifier.kind} (timeout ${m.benchmark.verifier.timeout_s}s)`,
    `contract    ${describeContract(verifierContract(m.benchmark.verifier), m.benchmark.verifier.kind)}${m.benchmark.gradeable_without_diff ? '; gradeable without a diff' : ''}`,
    `panel       ${panel.instances.length} instances from ${m.panel.source}${panel.quarantine.length ? `, ${panel.quarantine.length} quarantined` : ''}`,
    'cells',
    ...m.cells.map((c) => {
      const role =
        c.id === m.baseline
          ? 'baseline'
          : multi && c.model !== base?.model && base && harnessKey(c) === harnessKey(base)
            ? `baseline on ${c.model ?? 'model'}`
            : orphaned.includes(routeOf(c))
              ? `not compared (no baseline on ${c.model ?? 'the default model'})`
              : treatmentIds(m).includes(c.id)
                ? 'treatment'
                : 'not compared'
      const runnable =
        isHarnessName(c.harness) && !HARNESSES[c.harness].runnable ? ' (not runnable on this machine)' : ''
      return `  ${c.id.padEnd(16)} ${`${c.harness}@${c.version}`.padEnd(34)} ${cellApi(c, cellRoute(m, c)).padEnd(9)}${c.model ? ` model ${c.model}` : ''} config ${(loaded.configHashes[c.id] ?? '').slice(0, 12)}  ${role}${runnable}`
    }),
    `budgets     timeout ${m.budgets.timeout_s}s, max spend ${m.budgets.max_spend_usd === undefined ? 'none' : `$${m.budgets.max_spend_usd}`}, max requests ${m.budgets.max_requests ?? 'none'} per attempt`,
    `runs        k=${m.trials} trial(s), ${shards}, concurrency ${m.concurrency}, seed ${m.seed}, retries ${m.retries.max} on ${m.retries.on.join('/') || 'none'}`,
    `thresholds  deficit ≥ ${m.thresholds.resolved_deficit_pp} pp; cost > ${m.thresholds.cost_ratio}×, fresh input > ${m.thresholds.fresh_input_ratio}×, requests > ${m.thresholds.request_ratio}×; confirmation ${m.confirmation.enabled ? `on (≤ ${m.confirmation.max_blocks} blocks)` : 'off'}`,
    `telemetry   ${m.telemetry.source}`,
  ]
  if (plan) {
    lines.push(
      `plan        ${plan.legs.length} legs (${plan.cells.length} cells × ${plan.shards.count} shards)${plan.shards.note ? `; ${plan.shards.note}` : ''}`,
    )
  }
  for (const r of orphaned) {
    const cells = m.cells.filter((c) => routeOf(c) === r).map((c) => c.id)
    lines.push(
      `warning     model ${r ?? '(default)'}: no cell runs the baseline's harness configuration (${base ? `${base.harness}@${base.version}, cell ${base.id}` : 'none'}), so ${cells.join(', ')} ${cells.length === 1 ? 'is' : 'are'} compared with nothing; declare that configuration on ${r ?? 'the default model'} too`,
    )
  }
  if (treatmentIds(m).length === 0) {
    lines.push(
      'warning     no treatment: with one cell there is nothing to compare (add a cell to compare with)',
    )
  }
  return lines.join('\n')
}
