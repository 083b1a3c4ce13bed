import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildComparison } from '../../src/compare/build.js'
import { publishedInput } from '../../src/ingest/published/input.js'
import { readPublished } from '../../src/ingest/published/read.js'
import { comparePublished } from '../../src/pipeline/published.js'
import { type Comparison, ComparisonSchema } from '../../src/records/comparison.js'
import { HwError } from '../../src/util/errors.js'

const tmp = () => mkdtempSync(path.join(tmpdir(), 'hw-pub-'))
const write = (dir: string, rel: string, value: unknown) => {
  const file = path.join(dir, rel)
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(value))
  return file
}
/** A file with this exact text (JSON that JSON.stringify cannot write, e.g. 1e400). */
const rawFile = (dir: string, rel: string, text: string) => {
  const file = path.join(dir, rel)
  writeFileSync(file, text)
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
    // Cells are named after the systems the files declare.
    expect([cmp.baseline, cmp.treatment]).toEqual(['Sys-A-1.0-m', 'Sys-B-m'])
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
      {
        instance: 'i10',
        reasons: [expect.objectContaining({ code: 'telemetry_missing', cell: 'Sys-A-1.0-m' })],
      },
    ])
    expect(markdown).toContain('| `Sys-A-1.0-m` → `Sys-B-m` | 10 |')

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
      ['OpenHands-v1.2.3-m-x', 'OpenHands v1.2.3 + m-x', 'v1.2.3'],
      ['Claude-Code-v9-m-x', 'Claude Code v9 + m-x', 'v9'],
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

  it('a malformed file names the field, what was expected and what it holds', async () => {
    const dir = tmp()
    const cases: Array<[unknown, string]> = [
      [{ resolved: 'abc' }, 'resolved: expected an array of instance ids, got a string ("abc")'],
      [
        { resolved: ['i1', 3], n_total: 'x' },
        'resolved[1]: expected an instance id (a string), got a number (3); n_total: expected the panel size (a whole number), got a string ("x")',
      ],
      [
        { resolved: ['i1'], cost_usd: [] },
        'cost_usd: expected an object {instance id: cost in USD}, got an array',
      ],
      [
        { i1: { resolved: 'yes' }, i2: 3 },
        'i1.resolved: expected true, false or null, got a string ("yes"); i2: expected an instance record {resolved, cost}, got a number (3)',
      ],
      // A number of the right type says what rule it breaks; one too large for a double says so.
      [
        { resolved: ['i1'], cost_usd: { i1: -1 }, n_total: 0 },
        'cost_usd.i1: expected a cost in USD (a number) or null, got a number (-1): below 0; n_total: expected the panel size (a whole number), got a number (0): not above 0',
      ],
      [
        { resolved: ['i1'], n_total: 2.5 },
        'n_total: expected the panel size (a whole number), got a number (2.5): not a whole number',
      ],
      [
        '{"resolved": ["i1"], "cost_usd": {"i1": 1e400}}',
        'cost_usd.i1: expected a cost in USD (a number) or null, got Infinity (not a finite number)',
      ],
    ]
    for (const [value, msg] of cases) {
      const f = typeof value === 'string' ? rawFile(dir, 'bad.json', value) : write(dir, 'bad.json', value)
      await expect(readPublished(f)).rejects.toMatchObject({
        code: 'published_invalid',
        where: f,
        message: `does not match the schema: ${msg}`,
      })
    }
    const f = write(dir, 'other.json', { hello: 1 })
    await expect(readPublished(f)).rejects.toMatchObject({
      message:
        'not a per-instance results file this command knows: expected a top-level "resolved" array, a "systems" object, or {instance id: {resolved, cost}} records; got keys "hello"',
    })
  })
})

describe('compare: the panel list and system selectors', () => {
  /** Two resolved lists without per-instance costs, each over its own ids. */
  function twoLists(dir: string) {
    const a = write(dir, 'a.json', { system: 'A', resolved: ['i1', 'i2', 'i3'], n_total: 500 })
    const b = write(dir, 'b.json', { system: 'B', resolved: ['i2', 'i3', 'i4'], n_total: 500 })
    return { a, b }
  }

  it('resolved lists cover the whole --instances panel: an id neither file names is unresolved on both sides', async () => {
    const dir = tmp()
    const a = write(dir, 'a.json', { system: 'A', resolved: ['i1', 'i2', 'i3'], n_total: 10 })
    const b = write(dir, 'b.json', { system: 'B', resolved: ['i2', 'i3', 'i4', 'i5'], n_total: 10 })
    const list = path.join(dir, 'panel.txt')
    writeFileSync(list, `${ids.join('\n')}\n`)
    const { parsed, warnings } = await compareFiles(a, b, { instances: list })
    const o = parsed.comparisons[0]!.outcome
    expect(o).toMatchObject({ n: 10, both: 2, baseline_only: 1, treatment_only: 2, neither: 5 })
    expect([o.baseline_rate, o.treatment_rate]).toEqual([0.3, 0.4])
    expect(o.diff_pp).toBeCloseTo(10, 12)
    expect(parsed.blocks).toMatchObject({ planned: 10, outcome_complete: 10 })
    // No per-instance cost: every block lacks telemetry, and the cost denominator says 0.
    expect(parsed.comparisons[0]!.denominators).toEqual({ outcome: 10, coverage: 10, cost: 0 })
    expect(parsed.blocks.incomplete.map((x) => x.reasons.map((r) => r.code))).toEqual(
      ids.map(() => ['telemetry_missing', 'telemetry_missing']),
    )
    expect(warnings).toEqual([])

    // Without --instances the ids neither file resolved are unknown: refused, naming n_total.
    await expect(compareFiles(a, b)).rejects.toMatchObject({
      code: 'published_panel',
      where: a,
      message:
        'n_total is 10 but the two files name only 5 instances: a resolved list does not name the instances it left unresolved, so they cannot be counted',
      help: 'pass --instances <file> listing the 10 instances of the benchmark (a JSON array or one id per line)',
    })
  })

  it("a resolved list's n_total must agree with --instances: fewer is an error, more a warning (a sub-panel)", async () => {
    const dir = tmp()
    const list = path.join(dir, 'panel.json')
    writeFileSync(list, JSON.stringify(ids))
    const b = write(dir, 'b.json', { system: 'B', resolved: ['i2'], n_total: 10 })
    const small = write(dir, 'small.json', { system: 'S', resolved: ['i1'], n_total: 8 })
    await expect(compareFiles(small, b, { instances: list })).rejects.toMatchObject({
      code: 'published_panel',
      where: small,
      message:
        'n_total is 8 but --instances lists 10 instances: the file does not say which of them it attempted',
    })
    const other = write(dir, 'other.json', { system: 'O', resolved: ['i1', 'x1', 'x2'], n_total: 10 })
    await expect(compareFiles(other, b, { instances: list })).rejects.toMatchObject({
      code: 'published_panel',
      where: other,
      message:
        "n_total is 10, as many as --instances lists, but the file names 2 id(s) not in that list (x1, x2): the file's panel is not the --instances list",
    })
    const big = write(dir, 'big.json', { system: 'G', resolved: ['i1', 'x1'], n_total: 500 })
    // A resolved id outside the panel would change the counts unseen: refused unless told to ignore it.
    await expect(compareFiles(big, b, { instances: list })).rejects.toMatchObject({
      code: 'published_panel',
      where: big,
      message: '1 resolved id(s) are not in --instances: x1',
    })
    const r = await compareFiles(big, b, { instances: list, ignoreUnknownIds: true })
    const want = [
      "G: compared on the 10 --instances ids of the file's 500 (n_total)",
      'G: 1 id(s) the file names are not in --instances and are ignored (1 of them resolved): x1',
    ]
    expect(r.warnings).toEqual(want)
    for (const w of want) expect(r.parsed.notes).toContain(w)
    expect(r.parsed.comparisons[0]!.outcome).toMatchObject({ n: 10, baseline_only: 1, treatment_only: 1 })
  })

  it("per-instance files cover only the ids they name: an absent id is that system's missing attempt, never a loss", async () => {
    const dir = tmp()
    const res = (named: string[], resolved: string[]) =>
      Object.fromEntries(named.map((id) => [id, { resolved: resolved.includes(id), cost: 1 }]))
    const a = write(dir, 'a/instance_results/x.json', res(['i1', 'i2', 'i3', 'i4'], ['i1', 'i2']))
    const b = write(dir, 'b/instance_results/x.json', res(['i1', 'i2', 'i3', 'i5'], ['i1', 'i3']))
    const list = path.join(dir, 'panel.txt')
    writeFileSync(list, ['i1', 'i2', 'i3', 'i4', 'i5', 'ghost-1'].join('\n'))
    const { parsed } = await compareFiles(a, b, { instances: list })
    expect(parsed.comparisons[0]!.outcome).toMatchObject({
      n: 3,
      both: 1,
      baseline_only: 1,
      treatment_only: 1,
      neither: 0,
    })
    const reasons = Object.fromEntries(parsed.blocks.incomplete.map((x) => [x.instance, x.reasons]))
    const missing = (cell: string, detail: string) => ({
      code: 'missing_attempt',
      cell,
      trial: null,
      attempt: null,
      detail,
    })
    expect(reasons).toEqual({
      i4: [missing('b', 'not in the file')],
      i5: [missing('a', 'not in the file')],
      'ghost-1': [missing('a', 'not in either file'), missing('b', 'not in either file')],
    })
    expect(parsed.notes).toEqual(
      expect.arrayContaining([
        '1 panel instance(s) are in neither file (incomplete blocks, not ties): ghost-1',
        'a: 1 panel instance(s) not in the file (missing attempts, incomplete blocks): i5',
        'b: 1 panel instance(s) not in the file (missing attempts, incomplete blocks): i4',
      ]),
    )

    // Mixed formats: the resolved list covers every panel id, the OpenHands file only its own.
    const rl = write(dir, 'rl.json', { system: 'R', resolved: ['i1', 'i4'], n_total: 6 })
    const mixed = (await compareFiles(rl, b, { instances: list })).parsed
    expect(mixed.comparisons[0]!.outcome).toMatchObject({
      n: 4,
      both: 1,
      baseline_only: 0,
      treatment_only: 1,
      neither: 2,
    })
    expect(
      mixed.blocks.incomplete
        .filter((x) => x.reasons.some((r) => r.code === 'missing_attempt'))
        .map((x) => [x.instance, x.reasons.filter((r) => r.code === 'missing_attempt').map((r) => r.cell)]),
    ).toEqual([
      ['ghost-1', ['b']],
      ['i4', ['b']],
    ])
  })

  it('an A/A-type pair of resolved lists over 500 ids: the 345 neither-resolved instances are ties, McNemar p ≈ 1.9e-4', async () => {
    const dir = tmp()
    const panel = Array.from({ length: 500 }, (_, i) => `inst-${String(i + 1).padStart(3, '0')}`)
    const both = panel.slice(0, 70)
    const a = write(dir, 'run-a.json', {
      system: 'A',
      resolved: [...both, ...panel.slice(70, 130)],
      n_total: 500,
    })
    const b = write(dir, 'run-b.json', {
      system: 'B',
      resolved: [...both, ...panel.slice(130, 155)],
      n_total: 500,
    })
    const list = path.join(dir, 'panel.json')
    writeFileSync(list, JSON.stringify(panel))
    const { parsed } = await compareFiles(a, b, { instances: list })
    const o = parsed.comparisons[0]!.outcome
    expect(o).toMatchObject({ n: 500, both: 70, baseline_only: 60, treatment_only: 25, neither: 345 })
    expect([o.baseline_rate, o.treatment_rate]).toEqual([0.26, 0.19])
    expect(o.mcnemar.p_two_sided).toBeGreaterThan(1.8e-4)
    expect(o.mcnemar.p_two_sided).toBeLessThan(2.0e-4)
  })

  it('the --instances file: a duplicate id names its line (F09); an id like ../x breaks the instance-id rule', async () => {
    const dir = tmp()
    const { a, b } = twoLists(dir)
    const list = path.join(dir, 'panel.txt')
    writeFileSync(list, 'i1\n# a comment\ni2\n\ni1\n')
    await expect(compareFiles(a, b, { instances: list })).rejects.toMatchObject({
      code: 'instances_invalid',
      where: `${list}:5`,
      message: `duplicate instance id "i1" (first at ${list}:1)`,
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

  it('resolved lists without costs over instance_ids.json: the published scores, n = 500', async () => {
    const a = path.join(D, 'mini-swe-agent__kimi-k2-thinking.json')
    const b = path.join(D, 'codex-acp__GPT-5.4.json')
    const { parsed, warnings } = await compareFiles(a, b, { instances: path.join(D, 'instance_ids.json') })
    const o = parsed.comparisons[0]!.outcome
    expect(o.n).toBe(500)
    expect(o.baseline_rate! * 100).toBeCloseTo(63.4, 10)
    expect(o.treatment_rate! * 100).toBeCloseTo(73.8, 10)
    expect(o.diff_pp!).toBeCloseTo(10.4, 10)
    expect(o.neither).toBe(103)
    expect(parsed.blocks.outcome_complete).toBe(500)
    expect(parsed.comparisons[0]!.denominators.cost).toBe(0)
    expect(warnings).toEqual([])
    await expect(compareFiles(a, b)).rejects.toMatchObject({ code: 'published_panel', where: a })
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
