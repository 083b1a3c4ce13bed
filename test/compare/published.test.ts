import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildComparison } from '../../src/compare/build.js'
import { comparePublished } from '../../src/compare/published/compare.js'
import { publishedInput } from '../../src/compare/published/input.js'
import { readPublished } from '../../src/compare/published/read.js'
import { type Comparison, ComparisonSchema } from '../../src/compare/schema.js'
import { HwError } from '../../src/errors.js'

const tmp = () => mkdtempSync(path.join(tmpdir(), 'hw-pub-'))
const write = (dir: string, rel: string, value: unknown) => {
  const file = path.join(dir, rel)
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(value))
  return file
}
const ids = Array.from({ length: 10 }, (_, i) => `i${i + 1}`)
const r4 = (x: number | null | undefined) =>
  x === null || x === undefined ? null : Math.round(x * 1e4) / 1e4

async function compareFiles(
  a: string,
  b: string,
  extra: Partial<Parameters<typeof comparePublished>[0]> = {},
) {
  const out = tmp()
  const r = await comparePublished({ baseline: a, treatment: b, out, resamples: 500, ...extra })
  const parsed = ComparisonSchema.parse(JSON.parse(readFileSync(r.comparisonPath, 'utf8')))
  return { ...r, parsed }
}

describe('compare: self-written files of each published format', () => {
  it('SWE-bench resolved lists: outcome table, McNemar, costs, null grades and null costs', async () => {
    const dir = tmp()
    const a = write(dir, 'sys-a.json', {
      system: 'Sys A 1.0 + m',
      harness: 'sys-a',
      harness_version: '1.0',
      model: 'm',
      resolved: ['i1', 'i2', 'i3', 'i4', 'i5', 'i6'],
      resolved_null: ['i7'],
      cost_usd: Object.fromEntries(ids.map((id, i) => [id, i === 9 ? null : 0.1 * (i + 1)])),
      n_total: 10,
    })
    const b = write(dir, 'sys-b.json', {
      system: 'Sys B + m',
      harness: 'sys-b',
      model: 'm',
      resolved: ['i1', 'i2', 'i3', 'i4', 'i8', 'i9', 'i10'],
      cost_usd: Object.fromEntries(ids.map((id) => [id, 0.2])),
      api_calls: Object.fromEntries(ids.map((id, i) => [id, 10 + i])),
      n_total: 10,
    })
    const { parsed, markdown } = await compareFiles(a, b)
    expect(parsed.kind).toBe('published')
    const cmp = parsed.comparisons[0]!
    expect([cmp.baseline, cmp.treatment]).toEqual(['sys-a', 'sys-b'])
    expect(cmp.outcome).toMatchObject({ n: 10, both: 4, baseline_only: 2, treatment_only: 3, neither: 1 })
    expect(cmp.outcome.mcnemar.p_two_sided).toBe(1)
    expect(cmp.metrics.spend_usd.n).toBe(9) // i10 has no baseline cost: missing, not zero
    expect(parsed.cells[0]!.resources!.spend_usd.mean).toBeCloseTo(0.5, 12)
    expect(parsed.cells[1]!.resources!.spend_usd.mean).toBeCloseTo(0.2, 12)
    expect(cmp.metrics.spend_usd.paired_difference.mean).toBeCloseTo(-0.3, 12)
    expect(parsed.cells[1]!.resources!.proxy_requests.mean).toBeCloseTo(14.5, 12)
    expect(parsed.stamp.model.declared).toBe('m')
    expect(parsed.notes).toContain(
      'Sys A 1.0 + m: 1 trial(s) with a null grade counted as unresolved, as the published score counts them (use --ungraded exclude to leave those blocks out)',
    )
    expect(parsed.blocks.incomplete).toEqual([
      { instance: 'i10', reasons: [expect.objectContaining({ code: 'telemetry_missing', cell: 'sys-a' })] },
    ])
    expect(markdown).toContain('| `sys-a` → `sys-b` | 10 |')

    const strict = (await compareFiles(a, b, { ungraded: 'exclude' })).parsed
    expect(strict.comparisons[0]!.outcome).toMatchObject({ n: 9, neither: 0 })
    expect(strict.blocks.incomplete.find((x) => x.instance === 'i7')!.reasons[0]!.code).toBe('ungraded')
  })

  it('OpenHands instance_results with metadata.json beside them', async () => {
    const dir = tmp()
    const res = (resolved: boolean[], cost: (i: number) => number | null) =>
      Object.fromEntries(ids.map((id, i) => [id, { resolved: resolved[i], cost: cost(i) }]))
    write(dir, 'oh/metadata.json', { agent_name: 'OpenHands', agent_version: 'v1.2.3', model: 'm-x' })
    const a = write(
      dir,
      'oh/instance_results/swe-bench.json',
      res([true, true, true, false, false, true, true, true, false, false], () => 1),
    )
    write(dir, 'cc/metadata.json', { agent_name: 'Claude Code', agent_version: 'v9', model: 'm-x' })
    const b = write(
      dir,
      'cc/instance_results/swe-bench.json',
      res([true, false, true, true, false, true, true, true, true, false], (i) => (i < 5 ? 2 : 3)),
    )
    const { parsed } = await compareFiles(a, b)
    expect(parsed.cells.map((c) => [c.id, c.label, c.version_declared])).toEqual([
      ['oh', 'OpenHands v1.2.3 + m-x', 'v1.2.3'],
      ['cc', 'Claude Code v9 + m-x', 'v9'],
    ])
    const cmp = parsed.comparisons[0]!
    expect(cmp.outcome).toMatchObject({ both: 5, baseline_only: 1, treatment_only: 2, neither: 2 })
    expect(cmp.metrics.spend_usd.ratio_of_means.estimate).toBeCloseTo(2.5, 12)
    expect(cmp.cost_per_resolution.baseline.portfolio_cost_per_resolution).toBeCloseTo(10 / 6, 12)
    expect(cmp.cost_per_resolution.treatment.portfolio_cost_per_resolution).toBeCloseTo(25 / 7, 12)
  })

  it('Terminal-Bench k-trial counts: pass@k / pass^k per system through the same path', async () => {
    const dir = tmp()
    const tasks = (counts: number[]) =>
      Object.fromEntries(
        counts.map((c, i) => [`task-${i + 1}`, { pass_rate: c / 5, n_trials: 5, n_success: c }]),
      )
    const file = write(dir, 'tb.json', {
      benchmark: 'tb-x',
      systems: { X__m: { tasks: tasks([5, 4, 0, 2]) }, Y__m: { tasks: tasks([5, 5, 1, 3]) } },
    })
    const { parsed } = await compareFiles(`${file}#X__m`, `${file}#Y__m`)
    const x = parsed.cells[0]!
    expect([0, 1, 2, 4].map((i) => r4(x.pass_hat_k[i]!.value))).toEqual([0.55, 0.425, 0.35, 0.25])
    expect([0, 1, 2, 4].map((i) => r4(x.pass_at_k[i]!.value))).toEqual([0.55, 0.675, 0.725, 0.75])
    // majority of 5: X resolves task-1, task-2; Y resolves task-1, task-2, task-4
    expect(parsed.comparisons[0]!.outcome).toMatchObject({ n: 4, both: 2, treatment_only: 1, neither: 1 })
    expect(parsed.comparisons[0]!.metrics.spend_usd.n).toBe(0)
    expect(parsed.stamp.trials).toBe(5)

    await expect(readPublished(file)).rejects.toMatchObject({
      code: 'published_system',
      details: ['systems: X__m, Y__m'],
    })
    await expect(readPublished(`${file}#nope`)).rejects.toBeInstanceOf(HwError)
  })

  it('rejects an unknown file with a HwError naming the formats', async () => {
    const f = write(tmp(), 'x.json', { hello: 1 })
    await expect(readPublished(f)).rejects.toMatchObject({
      code: 'published_invalid',
      help: expect.stringMatching(/SWE-bench/),
    })
    await expect(readPublished('/nonexistent.json')).rejects.toMatchObject({ code: 'published_unreadable' })
  })
})

describe('compare: the panel list and system selectors', () => {
  /** Two resolved lists without per-instance costs, each over its own ids. */
  function twoLists(dir: string) {
    const a = write(dir, 'a.json', { system: 'A', resolved: ['i1', 'i2', 'i3'], n_total: 500 })
    const b = write(dir, 'b.json', { system: 'B', resolved: ['i2', 'i3', 'i4'], n_total: 500 })
    return { a, b }
  }

  it('ids in neither file are incomplete blocks ("not in either file"), never ties', async () => {
    const dir = tmp()
    const { a, b } = twoLists(dir)
    const ghost = Array.from({ length: 20 }, (_, i) => `ghost-${i + 1}`)
    const list = path.join(dir, 'panel.txt')
    writeFileSync(list, `${ghost.join('\n')}\n`)
    const { parsed } = await compareFiles(a, b, { instances: list })
    const o = parsed.comparisons[0]!.outcome
    expect([o.n, o.wins, o.losses, o.ties]).toEqual([0, 0, 0, 0])
    expect(parsed.blocks).toMatchObject({ planned: 20, outcome_complete: 0 })
    expect(parsed.blocks.incomplete).toHaveLength(20)
    for (const blk of parsed.blocks.incomplete) {
      expect(blk.reasons).toEqual([
        { code: 'missing_attempt', cell: 'a', trial: null, attempt: null, detail: 'not in either file' },
        { code: 'missing_attempt', cell: 'b', trial: null, attempt: null, detail: 'not in either file' },
      ])
    }
    expect(parsed.notes).toContainEqual(
      expect.stringMatching(
        /^20 panel instance\(s\) are in neither file \(incomplete blocks, not ties\): ghost-1, /,
      ),
    )

    // Mixed: ids either file names keep the resolved-list meaning; the ghosts stay out.
    writeFileSync(list, ['i1', 'i2', 'i3', 'i4', 'ghost-1'].join('\n'))
    const mixed = (await compareFiles(a, b, { instances: list })).parsed
    expect(mixed.comparisons[0]!.outcome).toMatchObject({
      n: 4,
      both: 2,
      baseline_only: 1,
      treatment_only: 1,
    })
    expect(mixed.instances.filter((x) => x.status === 'incomplete').map((x) => x.instance)).toEqual([
      'ghost-1',
    ])
  })

  it('the --instances file: a duplicate id names its line (F09); an id like ../x breaks the instance-id rule', async () => {
    const dir = tmp()
    const { a, b } = twoLists(dir)
    const list = path.join(dir, 'panel.txt')
    writeFileSync(list, 'i1\n# a comment\ni2\n\ni1\n')
    await expect(compareFiles(a, b, { instances: list })).rejects.toMatchObject({
      code: 'instances_invalid',
      where: `${list}:5`,
      message: `duplicate instance id "i1" (first at ${list}:1) (F09)`,
    })
    writeFileSync(list, 'i1\n../x\n')
    await expect(compareFiles(a, b, { instances: list })).rejects.toMatchObject({
      code: 'instances_invalid',
      where: `${list}:2`,
      message: expect.stringMatching(/^bad instance id "\.\.\/x": expected an instance id/),
    })
    const json = path.join(dir, 'panel.json')
    writeFileSync(json, JSON.stringify(['i1', 'i2', 'i2']))
    await expect(compareFiles(a, b, { instances: json })).rejects.toMatchObject({
      code: 'instances_invalid',
      where: `${json} [2]`,
    })
    writeFileSync(json, JSON.stringify(['i1', 'a/b']))
    await expect(compareFiles(a, b, { instances: json })).rejects.toMatchObject({ where: `${json} [1]` })
  })

  it('a #system selector on a one-system file is an error, as on a Terminal-Bench file without one', async () => {
    const dir = tmp()
    const { a } = twoLists(dir)
    await expect(readPublished(`${a}#foo`)).rejects.toMatchObject({
      code: 'published_system',
      message: 'this file holds one system; drop #foo',
      where: a,
    })
    const oh = write(dir, 'sys/instance_results/x.json', { i1: { resolved: true, cost: 1 } })
    await expect(readPublished(`${oh}#bar`)).rejects.toMatchObject({
      message: 'this file holds one system; drop #bar',
    })
    expect((await readPublished(a)).system.name).toBe('A')
  })

  it('--resamples outside 200–100000 is refused before any file is read', async () => {
    await expect(
      comparePublished({ baseline: '/nonexistent-a', treatment: '/nonexistent-b', out: tmp(), resamples: 0 }),
    ).rejects.toMatchObject({
      code: 'usage',
      message: '--resamples must be a whole number from 200 to 100000, got 0',
    })
  })
})

const SHARED = path.resolve(import.meta.dirname, '../../../shared/data')
const haveShared = existsSync(path.join(SHARED, 'swebench-verified/paired_examples.json'))
if (!haveShared)
  console.warn(
    `published-results reproduction skipped: ${SHARED} is absent (it is not part of a fresh clone)`,
  )

interface PairedExample {
  a: string
  b: string
  both: number
  a_only: number
  b_only: number
  neither: number
  mcnemar_exact_p: number
  mean_cost_a?: number
  mean_cost_b?: number
  mean_paired_cost_diff?: number
  n_cost_pairs?: number
}

/** The comparison's figures in paired_examples.json's terms (a = baseline, b = treatment), rounded as given. */
function asExample(c: Comparison): Omit<PairedExample, 'a' | 'b'> {
  const cmp = c.comparisons[0]!
  const r = (x: number | null | undefined, d: number) =>
    x === null || x === undefined ? undefined : Math.round(x * 10 ** d) / 10 ** d
  const diff = cmp.metrics.spend_usd.paired_difference.mean
  return {
    both: cmp.outcome.both,
    a_only: cmp.outcome.baseline_only,
    b_only: cmp.outcome.treatment_only,
    neither: cmp.outcome.neither,
    mcnemar_exact_p: r(cmp.outcome.mcnemar.p_two_sided, 4)!,
    mean_cost_a: r(c.cells[0]!.resources!.spend_usd.mean, 3),
    mean_cost_b: r(c.cells[1]!.resources!.spend_usd.mean, 3),
    mean_paired_cost_diff: r(diff === null ? null : -diff, 3),
    n_cost_pairs: cmp.metrics.spend_usd.n,
  }
}

describe.skipIf(!haveShared)('compare: reproduces published paired examples (../shared/data)', () => {
  const D = path.join(SHARED, 'swebench-verified')
  const examples: PairedExample[] = haveShared
    ? JSON.parse(readFileSync(path.join(D, 'paired_examples.json'), 'utf8'))
    : []

  it.each(examples.map((e) => [`${e.a} vs ${e.b}`, e] as const))('%s', async (_name, e) => {
    const a = await readPublished(path.join(D, `${e.a}.json`))
    const b = await readPublished(path.join(D, `${e.b}.json`))
    const got = asExample(buildComparison(publishedInput(a.system, b.system, { resamples: 200 })))
    const {
      a: _a,
      b: _b,
      pct_a: _pa,
      pct_b: _pb,
      ...want
    } = e as PairedExample & { pct_a: number; pct_b: number }
    // Examples without costs on one side list no cost figures: we must have none either.
    const expected = {
      mean_cost_a: undefined,
      mean_cost_b: undefined,
      mean_paired_cost_diff: undefined,
      n_cost_pairs: 0,
      ...want,
    }
    if (!('mean_cost_a' in want)) {
      expect(got.n_cost_pairs).toBe(0)
      expect(got.mean_paired_cost_diff).toBeUndefined()
      const { mean_cost_a: _x, mean_cost_b: _y, ...rest } = expected
      const { mean_cost_a: _u, mean_cost_b: _v, ...gotRest } = got
      expect(gotRest).toEqual(rest)
    } else {
      expect(got).toEqual(expected)
    }
  })

  it('the OpenHands index instance_results give the same figures as the SWE-bench export', async () => {
    const I = path.join(SHARED, 'openhands-index')
    const { parsed } = await compareFiles(
      path.join(I, 'openhands__claude-opus-4-6/instance_results/swe-bench.json'),
      path.join(I, 'claude-code-acp__claude-opus-4-6/instance_results/swe-bench.json'),
    )
    const e = examples.find(
      (x) => x.a === 'openhands__claude-opus-4-6' && x.b === 'claude-code-acp__claude-opus-4-6',
    )!
    expect(asExample(parsed)).toMatchObject({
      both: e.both,
      a_only: e.a_only,
      b_only: e.b_only,
      neither: e.neither,
      mcnemar_exact_p: e.mcnemar_exact_p,
      mean_cost_a: e.mean_cost_a,
      mean_cost_b: e.mean_cost_b,
    })
    expect(parsed.cells[1]!.label).toBe('Claude Code v1.15.0 + claude-opus-4-6')
  })

  it('Terminal-Bench 2.0: pass@1 equals each system’s published mean pass rate; pass^k over 5 trials', async () => {
    const file = path.join(SHARED, 'terminal-bench/terminal-bench-2.0_per_task.json')
    const json = JSON.parse(readFileSync(file, 'utf8'))
    const { parsed } = await compareFiles(`${file}#Ante__Gemini-3-Pro-Preview`, `${file}#Terminus2__GLM-4.7`)
    expect(parsed.blocks.planned).toBe(89)
    for (const [i, name] of ['Ante__Gemini-3-Pro-Preview', 'Terminus2__GLM-4.7'].entries()) {
      const cell = parsed.cells[i]!
      expect(cell.pass_at_k[0]!.value! * 100).toBeCloseTo(json.systems[name].mean_pass_rate_pct, 1)
      expect(cell.pass_hat_k).toHaveLength(5)
      expect(cell.pass_hat_k[4]!.value!).toBeLessThanOrEqual(cell.pass_hat_k[0]!.value!)
      expect(cell.pass_at_k[4]!.value!).toBeGreaterThanOrEqual(cell.pass_at_k[0]!.value!)
    }
  })
})
