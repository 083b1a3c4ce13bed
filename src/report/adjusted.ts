import type { Comparison, ComparisonEntry } from '../records/comparison.js'

/**
 * The adjusted p a report shows beside a comparison's test. A report that states one comparison
 * shows the comparison's own Holm p (the family is that comparison's tests, so under Holm the two
 * are the same number). A report that states more (several comparisons, or harness × model
 * interactions) shows the family's adjusted p from `multiplicity` — the number the family section
 * and its one sentence speak of — so a reader never sees two adjusted p for one test. A
 * comparison.json written before the family adjustment existed falls back to the comparison's own.
 */
export interface AdjustedP {
  /** The adjusted p, or null when the test was not run (no sign test on no blocks). */
  p: number | null
  /** What the adjustment spans, for the column header: "Holm" or "Holm across all 19 tests". */
  label: string
}

/** The label of the adjusted-p column for `c`'s comparisons (the same for every table of one report). */
export function adjustedLabel(c: Comparison): string {
  const fam = familyOf(c)
  if (!fam) return 'Holm'
  const method = fam.method === 'holm' ? 'Holm' : 'Benjamini–Hochberg'
  return `${method} across all ${fam.tests.length} tests`
}

/** The adjusted p of test `id` ("mcnemar", "sign:<metric>") of comparison `e` of `c`. */
export function adjustedP(c: Comparison, e: ComparisonEntry, id: string): AdjustedP {
  const fam = familyOf(c)
  const label = adjustedLabel(c)
  if (!fam) return { p: e.tests.find((t) => t.id === id)?.p_holm ?? null, label }
  const name = `${e.baseline} → ${e.treatment}`
  const model = e.model ?? null
  const row = fam.tests.find((t) => t.comparison === name && t.model === model && t.id === id)
  return { p: row?.p_adjusted ?? null, label }
}

/**
 * The family whose numbers the report shows, or null when each comparison's own Holm is shown: no
 * family recorded, or a family of one comparison under Holm (identical numbers; the label stays
 * "Holm"). A one-comparison family under Benjamini–Hochberg is shown, since its numbers differ.
 */
function familyOf(c: Comparison): NonNullable<Comparison['multiplicity']> | null {
  const fam = c.multiplicity
  if (!fam) return null
  const own = c.comparisons.reduce((n, e) => n + e.tests.length, 0)
  const single = c.comparisons.length <= 1 && fam.tests.length === own
  if (single && fam.method === 'holm') return null
  return fam
}
