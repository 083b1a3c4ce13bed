import { readFile } from 'node:fs/promises'
import type { LoadedManifest } from '../manifest/load.js'
import type { Cell } from '../manifest/schema.js'
import { type Leg, type Plan, PlanSchema } from '../plan/schema.js'
import { HwError } from '../util/errors.js'
import { parseJsonText } from '../util/json-text.js'
import { quotePath } from '../util/paths.js'
import { sourceLocator } from '../util/source-locate.js'
import { issueLine } from '../util/zod-message.js'

/**
 * Read and validate plan.json. Every instance id is checked by the schema (no `/`, no `..`: ids name
 * folders), so a tampered plan is rejected before anything runs. Throws HwError `plan_invalid`
 * (unreadable, not JSON, or one detail line per schema problem).
 */
export async function loadPlan(file: string): Promise<Plan> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError('plan_invalid', `cannot read plan.json (${(e as NodeJS.ErrnoException).code})`, {
      where: quotePath(file),
      help: 'pass the plan.json written by `harness-watch plan`',
    })
  }
  return parsePlan(parseJsonText(text, file, 'plan_invalid'), quotePath(file), { file, text })
}

/**
 * Legs and artifacts a plan names twice, as `legs[3].leg: "a-s0" repeats legs[0]` lines: each leg is
 * one artifact folder, so a repeated one would be read (and its rows counted) twice.
 */
export function duplicateLegs(plan: Plan): string[] {
  const problems: string[] = []
  for (const field of ['leg', 'artifact'] as const) {
    const first = new Map<string, number>()
    plan.legs.forEach((l, i) => {
      const at = first.get(l[field])
      if (at === undefined) first.set(l[field], i)
      else problems.push(`legs[${i}].${field}: "${l[field]}" repeats legs[${at}] (each leg is one artifact)`)
    })
  }
  return problems
}

/**
 * Validate a plan object (PlanSchema, legs named once). Throws HwError `plan_invalid` naming each bad
 * field; with `source` (the file and the text `value` was parsed from) each schema problem starts with
 * its `file:line:column`.
 */
export function parsePlan(
  value: unknown,
  where = 'plan.json',
  source?: { file: string; text: string },
): Plan {
  const r = PlanSchema.safeParse(value)
  if (r.success) {
    const dups = duplicateLegs(r.data)
    if (dups.length === 0) return r.data
    throw new HwError('plan_invalid', `${dups.length} problem(s) in the plan`, {
      where,
      details: dups,
      help: 'regenerate it with `harness-watch plan` (plan.json is not meant to be edited)',
    })
  }
  const locator = source ? sourceLocator(source.text) : null
  throw new HwError('plan_invalid', `${r.error.issues.length} problem(s) in the plan`, {
    where,
    details: r.error.issues.slice(0, 20).map((i) => {
      const at = locator?.(i.path)
      const place = source && at ? `${quotePath(`${source.file}:${at.line}:${at.col}`)} ` : ''
      return `${place}${issueLine(i, value)}`
    }),
    help: 'regenerate it with `harness-watch plan` (plan.json is not meant to be edited)',
  })
}

/** The leg to run, its cell and config hash, checked against the manifest the plan was made from. */
export interface LegSelection {
  plan: Plan
  leg: Leg
  cell: Cell
  configHash: string
}

/**
 * Pick `legId` from a validated plan and check the plan still describes this manifest: its
 * manifest_sha256 must equal the manifest file's sha256 and the cell's config hash must match —
 * otherwise the plan is stale (config drift) and HwError `plan_stale` is thrown. HwError
 * `leg_unknown` when the plan has no such leg, `plan_invalid` when the leg lists an instance twice.
 */
export function selectLeg(loaded: LoadedManifest, planValue: unknown, legId: string): LegSelection {
  const plan = parsePlan(planValue)
  if (plan.manifest_sha256 !== loaded.sha256) {
    throw new HwError(
      'plan_stale',
      `the plan is stale: it was made from a manifest with sha256 ${plan.manifest_sha256.slice(0, 12)}…, but ${quotePath(loaded.file)} has ${loaded.sha256.slice(0, 12)}… (config drift)`,
      {
        where: quotePath(loaded.file),
        help: 'run `harness-watch plan` again on this manifest, then run the legs of the new plan',
      },
    )
  }
  const leg = plan.legs.find((l) => l.leg === legId)
  if (!leg) {
    const known = plan.legs.map((l) => l.leg)
    throw new HwError('leg_unknown', `the plan has no leg "${legId}"`, {
      help: known.length > 0 ? `legs in this plan: ${known.slice(0, 20).join(', ')}` : 'the plan has no legs',
    })
  }
  const seen = new Set<string>()
  for (const id of leg.instances) {
    // F09: ids name per-instance folders and pair keys; a duplicate would be run and counted twice.
    if (seen.has(id)) {
      throw new HwError('plan_invalid', `leg "${legId}" lists instance "${id}" twice`, {
        help: 'regenerate it with `harness-watch plan` (plan.json is not meant to be edited)',
      })
    }
    seen.add(id)
  }
  const cell = loaded.manifest.cells.find((c) => c.id === leg.cell)
  const configHash = loaded.configHashes[leg.cell]
  const planned = plan.cells.find((c) => c.id === leg.cell)
  if (!cell || !configHash || !planned || planned.config_hash !== configHash) {
    throw new HwError(
      'plan_stale',
      `the plan is stale: cell "${leg.cell}" differs from the manifest (config drift)`,
      {
        where: quotePath(loaded.file),
        help: 'run `harness-watch plan` again on this manifest',
      },
    )
  }
  return { plan, leg, cell, configHash }
}
