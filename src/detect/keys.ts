/**
 * Comparison keys: the identity of a tracked comparison across runs (tracking issue, PR comment,
 * signal ids). Built from manifest ids (letters, digits, ".", "_", "-"), so "/" separates safely.
 */

/** A competitive comparison: `<experiment>/<baseline>-vs-<treatment>`. */
export function comparisonKey(experiment: string, baseline: string, treatment: string): string {
  return `${experiment}/${baseline}-vs-${treatment}`
}

/** A self-regression (a cell against its own earlier run): `<experiment>/self/<cell>`. */
export function selfKey(experiment: string, cell: string): string {
  return `${experiment}/self/${cell}`
}
