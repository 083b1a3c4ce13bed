import { readFileSync } from 'node:fs'

/**
 * The charting libraries inlined into report.html (no network at view time): Chart.js 4.5.1 and
 * chartjs-chart-matrix 3.1.0, their minified UMD builds read from node_modules.
 *
 * Written as `new URL('<relative path>', import.meta.url)` on purpose: @vercel/ncc recognises this
 * form and copies the file next to the bundle (dist/ and dist/cli/), rewriting the URL, so the
 * action and the bundled CLI read their own copy; from src/ (tests, tsx) it resolves into node_modules.
 */
let cached: { chart: string; matrix: string } | undefined

export function chartSources(): { chart: string; matrix: string } {
  if (cached) return cached
  const chart = readFileSync(
    new URL('../../node_modules/chart.js/dist/chart.umd.min.js', import.meta.url),
    'utf8',
  )
  const matrix = readFileSync(
    new URL('../../node_modules/chartjs-chart-matrix/dist/chartjs-chart-matrix.min.js', import.meta.url),
    'utf8',
  )
  cached = { chart: forInlineScript(chart), matrix: forInlineScript(matrix) }
  return cached
}

/** Drop the source-map comment (a viewer would try to fetch it) and guard against an early `</script`. */
export function forInlineScript(src: string): string {
  return src.replace(/\n?\/\/# sourceMappingURL=\S*\s*$/, '\n').replace(/<\/(script)/gi, '<\\/$1')
}
