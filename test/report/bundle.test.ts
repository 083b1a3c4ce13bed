import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { utf8Length } from '../../src/report/budget.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'
import { runBundle } from '../support/run-bundle.js'

// The bundles in dist/ are rebuilt centrally; they carry the charting libraries as relocated assets
// once they include the aggregate stage. Before that, these tests say why they skip.
const root = path.resolve(import.meta.dirname, '..', '..')
const actionReady = existsSync(path.join(root, 'dist', 'chart.umd.min.js'))
const cliReady = existsSync(path.join(root, 'dist', 'cli', 'chart.umd.min.js'))
if (!actionReady)
  console.warn('bundled aggregate test skipped: dist/ predates the aggregate stage (npm run build)')
if (!cliReady)
  console.warn('bundled CLI aggregate test skipped: dist/cli/ predates the aggregate stage (npm run build)')

async function fixture() {
  const plan = await makePlan({ panel: { source: 'inline', instances: ids(12) } })
  return {
    plan: writePlan(plan),
    artifacts: writeArtifacts(plan, pairedOutcomes(plan, { both: 6, bOnly: 2, cOnly: 3, neither: 1 })),
    out: mkdtempSync(path.join(tmpdir(), 'hw-bundle-')),
  }
}

describe.skipIf(!actionReady)('the bundled action runs aggregate', () => {
  it('writes comparison.json, report.md and a self-contained report.html, and the job summary', async () => {
    const f = await fixture()
    const r = runBundle({ command: 'aggregate', plan: f.plan, artifacts: f.artifacts, out: f.out })
    expect(r.status).toBe(0)
    expect(r.outputs['comparison-path']).toBe(path.join(f.out, 'comparison.json'))
    expect(r.outputs['report-path']).toBe(path.join(f.out, 'report.md'))
    const html = readFileSync(path.join(f.out, 'report.html'), 'utf8')
    expect(html.includes('Chart.js v4.5.1') && html.includes('chartjs-chart-matrix v3.1.0')).toBe(true)
    expect(r.summary).toContain('Harness Watch — `exp-a`')
    expect(utf8Length(r.summary)).toBeLessThan(1024 * 1024)
  })
})

describe.skipIf(!cliReady)('the bundled CLI runs aggregate', () => {
  it('bin/harness-watch.js aggregate inlines the charting libraries from its own assets', async () => {
    const f = await fixture()
    const r = spawnSync(
      process.execPath,
      [
        path.join(root, 'bin', 'harness-watch.js'),
        'aggregate',
        '--plan',
        f.plan,
        '--artifacts',
        f.artifacts,
        '--out',
        f.out,
      ],
      { encoding: 'utf8', cwd: tmpdir() },
    )
    expect(r.status, r.stderr).toBe(0)
    const html = readFileSync(path.join(f.out, 'report.html'), 'utf8')
    expect(html.includes('Chart.js v4.5.1')).toBe(true)
  })
})
