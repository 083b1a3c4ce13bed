/** Paths a `git diff` changes (the b/ side, or a/ for deletions), in order. Pure. */
export function diffPaths(patch: string): string[] {
  const out: string[] = []
  for (const m of patch.matchAll(/^diff --git a\/(.+?) b\/(.+)$/gm)) out.push(m[2] ?? m[1] ?? '')
  return out
}

const TEST_PATH =
  /(^|\/)(tests?|__tests__|spec|specs|testing)\/|(^|\/)test_[^/]*\.py$|_test\.(py|go)$|\.(test|spec)\.[cm]?[jt]sx?$|(^|\/)conftest\.py$|Tests?\.(java|kt|cs)$/

/** Whether a path is a test file by the common conventions (tests/, test_*.py, *.test.ts, *_test.go, …). */
export function isTestPath(p: string): boolean {
  return TEST_PATH.test(p)
}

/** True when the diff changes at least one file and every one of them is a test file. */
export function testOnlyDiff(patch: string): boolean {
  const paths = diffPaths(patch)
  return paths.length > 0 && paths.every(isTestPath)
}
