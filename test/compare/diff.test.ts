import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { main } from '../../src/cli/index.js'
import { ComparisonDiffSchema } from '../../src/compare/diff.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from './fixtures.js'

/** Run the CLI, capturing stdout and stderr. */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s)
    return true
  })
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s)
    return true
  })
  try {
    const code = await main(args)
    return { code, out, err }
  } finally {
    o.mockRestore()
    e.mockRestore()
  }
}

afterEach(() => {
  process.exitCode = undefined
})

async function runOnce(table: Parameters<typeof pairedOutcomes>[1], spendScale = 1) {
  const plan = await makePlan({ panel: { source: 'inline', instances: ids(10) } })
  const atts = pairedOutcomes(
    plan,
    table,
    ['a', 'b'],
    (cell, i) => (cell === 'a' ? 0.1 : 0.2) * spendScale * (1 + i),
  )
  const out = mkdtempSync(path.join(tmpdir(), 'hw-diff-'))
  const r = await cli([
    'aggregate',
    '--plan',
    writePlan(plan),
    '--artifacts',
    writeArtifacts(plan, atts),
    '--out',
    out,
    '--resamples',
    '300',
  ])
  expect(r.code).toBe(0)
  expect(r.out).toMatch(/10 blocks planned: 10 outcome-complete/)
  return path.join(out, 'comparison.json')
}

describe('harness-watch diff', () => {
  it('lists per-instance regressions and fixes of each cell with the deltas (JSON and Markdown)', async () => {
    // old: a resolves t-001..t-007; b resolves t-001..t-006, t-008
    const oldFile = await runOnce({ both: 6, bOnly: 1, cOnly: 1, neither: 2 })
    // new: a resolves t-001..t-005 (t-006, t-007 regress); b resolves t-001..t-008 (t-007 fixed)
    const newFile = await runOnce({ both: 5, bOnly: 0, cOnly: 3, neither: 2 }, 2)
    const json = await cli(['diff', oldFile, newFile, '--json'])
    expect(json.code).toBe(0)
    const d = ComparisonDiffSchema.parse(JSON.parse(json.out))
    const a = d.cells.find((c) => c.cell === 'a')!
    expect(a).toMatchObject({
      n: 10,
      regressions: ['t-006', 't-007'],
      fixes: [],
      old_rate: 0.7,
      new_rate: 0.5,
    })
    expect(a.delta_pp).toBeCloseTo(-20, 12)
    expect(a.mcnemar.p_two_sided).toBe(0.5)
    expect(a.mcnemar.p_one_sided).toBe(0.25)
    expect(a.spend_usd.ratio_of_means).toBeCloseTo(2, 12)
    expect(a.spend_usd.n).toBe(10)
    const b = d.cells.find((c) => c.cell === 'b')!
    expect(b).toMatchObject({ regressions: [], fixes: ['t-007'], old_rate: 0.7, new_rate: 0.8 })
    expect(d.instances).toEqual({ common: 10, only_old: [], only_new: [] })

    const md = await cli(['diff', oldFile, newFile])
    expect(md.out).toContain('| `a` | 10 | 2 | 0 | 70.0% → 50.0% | −20.0 pp |')
    expect(md.out).toContain('| `t-006` | regression (resolved → unresolved) |')
    expect(md.out).toContain('## `b`')
    expect(md.out).toContain('| `t-007` | fix (unresolved → resolved) |')
  })

  it('refuses to diff different experiments or runs with no instance in common (exit 2) unless --allow-different-experiments', async () => {
    const oldFile = await runOnce({ both: 6, bOnly: 1, cOnly: 1, neither: 2 })
    const same = await cli(['diff', oldFile, oldFile])
    expect([same.code, same.err]).toEqual([0, ''])
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-diff-'))
    const c = JSON.parse(readFileSync(oldFile, 'utf8'))
    const sha = String(c.stamp.manifest_sha256).slice(0, 12)
    const other = path.join(dir, 'other.json')
    writeFileSync(other, JSON.stringify({ ...c, experiment_id: 'another-experiment' }))
    const r = await cli(['diff', oldFile, other])
    expect(r.code).toBe(2)
    expect(r.out).toBe('')
    expect(r.err).toContain(
      `error: the two comparisons are not runs of one experiment: different experiments: old ${c.experiment_id} (manifest ${sha}), new another-experiment (manifest ${sha})`,
    )
    expect(r.err).toContain('--allow-different-experiments')

    // Same experiment id, no instance in common: every row has n = 0, so no McNemar p at all.
    const renamed = path.join(dir, 'renamed.json')
    writeFileSync(
      renamed,
      JSON.stringify({
        ...c,
        instances: c.instances.map((x: { instance: string }) => ({ ...x, instance: `u-${x.instance}` })),
      }),
    )
    const none = await cli(['diff', oldFile, renamed])
    expect(none.code).toBe(2)
    expect(none.err).toMatch(/no instance in both runs \(old 10, new 10\): nothing to pair/)
    const forced = await cli(['diff', oldFile, renamed, '--allow-different-experiments'])
    expect(forced.code).toBe(0)
    expect(forced.err).toBe(
      'warning: no instance in both runs (old 10, new 10): nothing to pair; diffed anyway (--allow-different-experiments)\n',
    )
    expect(forced.out).toContain('| `a` | 0 | 0 | 0 | — → — | — | — · — |')
    const json = ComparisonDiffSchema.parse(
      JSON.parse((await cli(['diff', oldFile, renamed, '--allow-different-experiments', '--json'])).out),
    )
    expect(json.cells.map((x) => x.mcnemar)).toEqual(
      ['a', 'b'].map(() => ({
        p_two_sided: null,
        p_one_sided: null,
        p_mid: null,
        note: 'no instance graded in both runs',
      })),
    )
  })

  it('rejects a file that is not a comparison.json with a message, exit 2', async () => {
    const bad = path.join(mkdtempSync(path.join(tmpdir(), 'hw-diff-')), 'x.json')
    writeFileSync(bad, '{"schema_version": 1}')
    const r = await cli(['diff', bad, bad])
    expect(r.code).toBe(2)
    expect(r.err).toMatch(/x\.json does not match the schema/)
    expect(r.err).not.toMatch(/at .*\.ts:\d+/) // no stack trace for a user mistake
  })
})

describe('harness-watch aggregate / compare front doors', () => {
  it('a missing plan is a usage error, not a crash', async () => {
    const r = await cli(['aggregate', '--plan', '/nonexistent/plan.json', '--artifacts', tmpdir()])
    expect(r.code).toBe(2)
    expect(r.err).toMatch(/cannot read plan/)
  })

  it('an empty artifacts folder lists every leg as missing, still writes the three files, and exits 1', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(3) } })
    const out = mkdtempSync(path.join(tmpdir(), 'hw-agg-'))
    const r = await cli([
      'aggregate',
      '--plan',
      writePlan(plan),
      '--artifacts',
      mkdtempSync(path.join(tmpdir(), 'hw-empty-')),
      '--out',
      out,
    ])
    expect(r.code).toBe(1)
    expect(r.out).toMatch(/3 blocks planned: 0 outcome-complete.*2 missing leg/)
    for (const f of ['comparison.json', 'report.md', 'report.html'])
      expect(existsSync(path.join(out, f))).toBe(true)
    const c = JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8'))
    expect(c.comparisons[0].outcome).toMatchObject({
      n: 0,
      diff_pp: null,
      reason: 'no outcome-complete blocks',
    })
    expect(c.comparisons[0].outcome.mcnemar.p_two_sided).toBe(1)
  })

  it('compare validates --ungraded', async () => {
    const r = await cli(['compare', '--baseline', 'a.json', '--treatment', 'b.json', '--ungraded', 'maybe'])
    expect(r.code).toBe(2)
    expect(r.err).toMatch(/--ungraded must be/)
  })
})
