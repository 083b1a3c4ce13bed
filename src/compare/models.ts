import type { CellInput, ComparisonInput } from '../ingest/observations.js'
import type { ComparisonEntry } from '../records/comparison.js'
import type { Interaction, ModelsSection, Multiplicity } from '../records/models.js'
import { benjaminiHochberg, holm, type InteractionBlock, pairedInteraction } from '../stats/index.js'
import type { Block } from './blocks.js'

/**
 * Several models in one experiment (pure). Cells are grouped by the model route they drive; blocks
 * pair only cells of one group, and each group's baseline is its cell running the baseline's harness
 * configuration (harness, version, config). Across two groups, the same pair of harness configurations
 * gives the harness × model interaction over the instances outcome-complete on both models.
 */

export interface ModelGroup {
  /** Route name (null: the top-level route). */
  route: string | null
  /** Label in reports: the route name, else the model id. */
  label: string
  modelId: string | null
  cells: CellInput[]
  baseline: string | null
  treatments: string[]
}

export const PAIRING_RULE =
  'several models: a block pairs only cells that drive the same model; each harness comparison is within one model, against the cell running the baseline harness configuration on that model'
export const INTERACTION_RULE =
  'harness × model interaction: over instances outcome-complete on both models, mean of (treatment − baseline on model A) − (treatment − baseline on model B) per instance; exact two-sided sign-flip test of no interaction; percentile bootstrap interval over instances'

/** The model groups of an input, or null when every cell drives one route (the one-model path). */
export function modelGroups(input: ComparisonInput): ModelGroup[] | null {
  if (!input.cells.some((c) => c.modelRoute !== undefined)) return null
  const byRoute = new Map<string | null, CellInput[]>()
  for (const c of input.cells) {
    const key = c.modelRoute ?? null
    const list = byRoute.get(key)
    if (list) list.push(c)
    else byRoute.set(key, [c])
  }
  if (byRoute.size < 2) return null
  const base = input.cells.find((c) => c.id === input.baseline)
  return [...byRoute.entries()].map(([route, cells]) => {
    const baseline =
      cells.find((c) => c.id === input.baseline) ??
      cells.find((c) => base?.harnessKey !== undefined && c.harnessKey === base.harnessKey) ??
      null
    const treatments = cells
      .map((c) => c.id)
      .filter(
        (id) => id !== baseline?.id && (input.treatments.includes(id) || sameHarnessAsTreatment(input, id)),
      )
    return {
      route,
      label: route ?? cells[0]?.modelDeclared ?? 'model',
      modelId: cells[0]?.modelDeclared ?? null,
      cells,
      baseline: baseline?.id ?? null,
      treatments,
    }
  })
}

/** A cell running the configuration of a declared treatment on another model is compared too. */
function sameHarnessAsTreatment(input: ComparisonInput, id: string): boolean {
  const key = input.cells.find((c) => c.id === id)?.harnessKey
  if (key === undefined) return false
  return input.treatments.some((t) => input.cells.find((c) => c.id === t)?.harnessKey === key)
}

/** One group's input: its cells, its rows and the reasons that concern them. */
export function groupInput(input: ComparisonInput, g: ModelGroup): ComparisonInput {
  const ids = new Set(g.cells.map((c) => c.id))
  return {
    ...input,
    cells: g.cells,
    baseline: g.baseline ?? '',
    treatments: g.treatments,
    observations: input.observations.filter((o) => ids.has(o.cell)),
    preReasons: input.preReasons.filter((p) => p.reason.cell === null || ids.has(p.reason.cell)),
  }
}

const harnessLabel = (c: CellInput | undefined) =>
  c ? `${c.harness}${c.versionDeclared ? `@${c.versionDeclared}` : ''}` : '?'

/**
 * Every harness × model interaction: for each pair of groups (in order) and each treatment of the
 * first whose harness configuration also runs on the second, the paired difference-in-differences.
 */
export function interactions(
  input: ComparisonInput,
  groups: ModelGroup[],
  blocks: Map<ModelGroup, Block[]>,
  opts: { resamples: number; seed: number; level: number },
): { interactions: Interaction[]; notes: string[] } {
  const out: Interaction[] = []
  const notes: string[] = []
  const cell = (id: string) => input.cells.find((c) => c.id === id)
  for (let a = 0; a < groups.length; a++) {
    for (let b = a + 1; b < groups.length; b++) {
      const ga = groups[a] as ModelGroup
      const gb = groups[b] as ModelGroup
      if (!ga.baseline || !gb.baseline) continue
      for (const ta of ga.treatments) {
        const key = cell(ta)?.harnessKey
        const tb = gb.treatments.find((t) => cell(t)?.harnessKey === key)
        if (!tb) {
          notes.push(`${ta} has no cell with its harness configuration on ${gb.label}: no interaction`)
          continue
        }
        const cells = { baseline_a: ga.baseline, treatment_a: ta, baseline_b: gb.baseline, treatment_b: tb }
        const shared = sharedBlocks(blocks.get(ga) ?? [], blocks.get(gb) ?? [], cells)
        const head = {
          baseline_harness: harnessLabel(cell(ga.baseline)),
          treatment_harness: harnessLabel(cell(ta)),
          model_a: ga.label,
          model_b: gb.label,
          cells,
          n: shared.length,
        }
        if (shared.length === 0) {
          const why = `no instance is outcome-complete on both ${ga.label} and ${gb.label}: no comparison across the models`
          out.push({
            ...head,
            gap_a_pp: null,
            gap_b_pp: null,
            estimate_pp: null,
            interval_pp: null,
            p: null,
            reverses: false,
            not_evaluated: why,
          })
          notes.push(
            `${ta} vs ${ga.baseline} on ${ga.label} and ${tb} vs ${gb.baseline} on ${gb.label}: ${why}`,
          )
          continue
        }
        const r = pairedInteraction(shared, opts)
        const pp = (x: number) => round(x * 100)
        out.push({
          ...head,
          gap_a_pp: pp(r.gapA),
          gap_b_pp: pp(r.gapB),
          estimate_pp: pp(r.estimate),
          interval_pp: r.interval ? [pp(r.interval[0]), pp(r.interval[1])] : null,
          p: r.pTwoSided,
          reverses: r.reverses,
          not_evaluated: null,
        })
      }
    }
  }
  return { interactions: out, notes }
}

/** Round to 1e-9 so sums of 1/n fractions print the same everywhere. */
function round(x: number): number {
  return Math.round(x * 1e9) / 1e9
}

function sharedBlocks(
  a: Block[],
  b: Block[],
  cells: { baseline_a: string; treatment_a: string; baseline_b: string; treatment_b: string },
): InteractionBlock[] {
  const onB = new Map(b.filter((x) => x.outcomeComplete).map((x) => [x.instance, x]))
  const out: InteractionBlock[] = []
  for (const x of a) {
    const y = onB.get(x.instance)
    if (!x.outcomeComplete || !y) continue
    const r = (blk: Block, id: string) => blk.cells.get(id)?.resolved
    const v = [
      r(x, cells.baseline_a),
      r(x, cells.treatment_a),
      r(y, cells.baseline_b),
      r(y, cells.treatment_b),
    ]
    if (v.some((s) => s === null || s === undefined)) continue
    out.push({
      baseA: v[0] as boolean,
      treatA: v[1] as boolean,
      baseB: v[2] as boolean,
      treatB: v[3] as boolean,
    })
  }
  return out
}

/** The models section of comparison.json. */
export function modelsSection(
  groups: ModelGroup[],
  blocks: Map<ModelGroup, Block[]>,
  found: { interactions: Interaction[]; notes: string[] },
): ModelsSection {
  const notes = [...found.notes]
  for (const g of groups) {
    if (!g.baseline)
      notes.push(
        `${g.label}: no cell runs the baseline's harness configuration, so no comparison on this model`,
      )
  }
  return {
    groups: groups.map((g) => {
      const bl = blocks.get(g) ?? []
      return {
        route: g.route,
        model_id: g.modelId,
        cells: g.cells.map((c) => c.id),
        baseline: g.baseline,
        blocks: { planned: bl.length, outcome_complete: bl.filter((x) => x.outcomeComplete).length },
      }
    }),
    interactions: found.interactions,
    notes,
  }
}

/**
 * One adjustment across every test the report states: each comparison's McNemar and sign tests and
 * every evaluated interaction, Holm (family-wise) or Benjamini–Hochberg (false discovery rate).
 */
export function familyAdjustment(
  comparisons: ComparisonEntry[],
  found: Interaction[],
  method: 'holm' | 'benjamini-hochberg',
  alpha: number,
): Multiplicity {
  const rows: Array<{ comparison: string; model: string | null; id: string; p: number }> = []
  for (const c of comparisons) {
    for (const t of c.tests) {
      rows.push({ comparison: `${c.baseline} → ${c.treatment}`, model: c.model ?? null, id: t.id, p: t.p })
    }
  }
  for (const i of found) {
    if (i.p === null) continue
    rows.push({
      comparison: `interaction ${i.treatment_harness} vs ${i.baseline_harness}, ${i.model_a}/${i.model_b}`,
      model: null,
      id: 'interaction',
      p: i.p,
    })
  }
  const adj =
    method === 'holm'
      ? holm(
          rows.map((r) => r.p),
          alpha,
        )
      : benjaminiHochberg(
          rows.map((r) => r.p),
          alpha,
        )
  const tests = rows.map((r, k) => ({
    ...r,
    p_adjusted: adj.adjusted[k] as number,
    reject: adj.reject[k] as boolean,
  }))
  const rejected = tests.filter((t) => t.reject).length
  const nComparisons = comparisons.filter((c) => c.tests.length > 0).length
  const nInteractions = found.filter((i) => i.p !== null).length
  const what = `${rows.length} test${rows.length === 1 ? '' : 's'} this report states (${nComparisons} comparison${nComparisons === 1 ? '' : 's'} × resolve rate and resources${nInteractions > 0 ? `, ${nInteractions} harness × model interaction${nInteractions === 1 ? '' : 's'}` : ''})`
  const statement =
    method === 'holm'
      ? `Holm's step-down adjustment across all ${what} keeps the chance of any false alarm at α = ${alpha}; ${rejected} reject${rejected === 1 ? 's' : ''}.`
      : `Benjamini–Hochberg adjustment across all ${what} keeps the expected share of false alarms among the rejections at ${alpha}; ${rejected} reject${rejected === 1 ? 's' : ''}.`
  return { method, alpha, tests, statement }
}
