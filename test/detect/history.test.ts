import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromium } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { detect } from '../../src/detect/decide.js'
import { HistorySchema } from '../../src/detect/history.js'
import { type Decision, DecisionSchema } from '../../src/detect/schema.js'
import { historyStep } from '../../src/pipeline/history.js'
import { type Comparison, ComparisonSchema } from '../../src/records/comparison.js'
import { strictJson } from '../../src/util/json.js'
import { captureOutput } from '../support/capture.js'
import { policy, ref } from './fixtures.js'
import { weeklyRun } from './history-fixtures.js'

// Four weekly runs of one experiment:
//   w1 2026-11-02  12 instances  a 8/12, b 10/12
//   w2 2026-11-09  12 instances  b upgraded 1.18.33 → 1.19.0 and resolves 2/12 (8 newly unresolved: a change point)
//   w4 2026-11-23  12 instances  14 days later: w3 is missing (a gap)
//   w5 2026-11-30  13 instances  a changed panel: its own segment, never joined to the line before
let dir: string
let files: string[]
let w2Decision: Decision

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'hw-history-'))
  const runs: Array<[string, Comparison]> = [
    ['w1', await weeklyRun('w1', '2026-11-02T06:00:00.000Z', { both: 8, bOnly: 0, cOnly: 2, neither: 2 })],
    [
      'w2',
      await weeklyRun(
        'w2',
        '2026-11-09T06:00:00.000Z',
        { both: 2, bOnly: 6, cOnly: 0, neither: 4 },
        { bVersion: '1.19.0' },
      ),
    ],
    [
      'w4',
      await weeklyRun(
        'w4',
        '2026-11-23T06:00:00.000Z',
        { both: 2, bOnly: 6, cOnly: 0, neither: 4 },
        { bVersion: '1.19.0' },
      ),
    ],
    [
      'w5',
      await weeklyRun(
        'w5',
        '2026-11-30T06:00:00.000Z',
        { both: 3, bOnly: 6, cOnly: 0, neither: 4 },
        { instances: 13, bVersion: '1.19.0' },
      ),
    ],
  ]
  files = []
  for (const [name, c] of runs) {
    mkdirSync(path.join(dir, name))
    const f = path.join(dir, name, 'comparison.json')
    writeFileSync(f, strictJson(c))
    files.push(f)
  }
  // w2's decision, from the detection stage against w1; its resolved-rate breach is then confirmed (as
  // the confirmation stage records it).
  const d = detect({ current: ref(runs[1]![1]), previous: ref(runs[0]![1]), policy, quarantine: [] })
  const breach = d.signals.find((s) => s.kind === 'competitive' && s.metric === 'resolved')!
  expect(breach).toBeDefined()
  w2Decision = DecisionSchema.parse({
    ...d,
    status: 'confirmed',
    signals: d.signals.map((s) => (s.id === breach.id ? { ...s, state: 'confirmed' } : s)),
  })
  writeFileSync(path.join(dir, 'w2', 'decision.json'), strictJson(w2Decision))
}, 60_000)

describe('history over four weekly comparison.json files', () => {
  it('orders the runs, marks the gap and the changed panel, and never joins two panels', async () => {
    // given out of order: the series is ordered by start time
    const out = path.join(dir, 'out')
    const r = await historyStep({ comparisons: [files[3]!, files[1]!, files[0]!, files[2]!], out })
    const h = HistorySchema.parse(JSON.parse(readFileSync(r.jsonPath, 'utf8')))
    expect(h.runs.map((x) => x.run_id)).toEqual(['w1', 'w2', 'w4', 'w5'])
    expect(h.runs.map((x) => x.break_before?.kind ?? null)).toEqual([null, null, 'gap', 'panel_changed'])
    expect(h.runs[2]!.break_before!.detail).toBe(
      '14 days after the previous run (cadence 7 days): about 1 run(s) missing',
    )
    expect(h.runs[3]!.break_before!.detail).toMatch(/12 instances → .*13 instances/)
    expect(h.segments.map((s) => s.runs)).toEqual([['w1', 'w2', 'w4'], ['w5']])
    expect(h.runs.map((x) => x.segment)).toEqual([0, 0, 0, 1])
  })

  it('carries each run’s figures with intervals, the decision, the confirmed breach, the change point and the upgrade', async () => {
    const r = await historyStep({ comparisons: files, out: path.join(dir, 'out2') })
    const [w1, w2, w4, w5] = r.history.runs
    // cell b: 10/12 then 2/12; Wilson 95% interval of 2/12 = [0.0470, 0.4480]
    const b2 = w2!.cells.find((c) => c.id === 'b')!
    expect(b2.resolve_rate.estimate).toBeCloseTo(2 / 12, 12)
    expect(b2.resolve_rate.ci![0]).toBeCloseTo(0.047, 3)
    expect(b2.resolve_rate.ci![1]).toBeCloseTo(0.448, 3)
    expect(w1!.comparisons[0]!.diff_pp.estimate).toBeCloseTo(100 * (2 / 12), 10)
    expect(w2!.comparisons[0]!.diff_pp.estimate).toBeCloseTo(-50, 10)
    expect(w2!.comparisons[0]!.diff_pp.ci).not.toBeNull()
    expect(w2!.comparisons[0]!.net_benefit_usd!.estimate).not.toBeNull()
    expect(w2!.decision!.status).toBe('confirmed')
    expect(w2!.confirmed_breaches.map((b) => b.metric)).toEqual(['resolved'])
    expect(w1!.decision).toBeNull()
    // b's 8 newly unresolved instances, none newly resolved: exact McNemar p = 2 · 0.5^8 = 0.0078125
    const cp = w2!.change_points.filter((c) => c.source === 'mcnemar')
    expect(cp).toEqual([
      {
        cell: 'b',
        source: 'mcnemar',
        direction: 'regression',
        detail:
          '8 newly unresolved, 0 newly resolved of 12 graded in both; exact McNemar p = 0.00781; resolve rate 83.3% → 16.7%',
      },
    ])
    // the self-regression signals of decision.json are listed too
    expect(w2!.change_points.some((c) => c.source === 'decision' && c.cell === 'b')).toBe(true)
    expect(w4!.change_points).toEqual([]) // same outcomes as w2
    expect(w5!.change_points).toEqual([]) // another panel: never tested against w4
    expect(w2!.capability_changes.map((c) => c.change)).toContain('opencode 1.18.33 → 1.19.0')
    expect(w2!.capability_changes.some((c) => c.cell === 'b' && c.change.startsWith('config '))).toBe(true)
    expect(w4!.capability_changes).toEqual([])
  })

  it('writes a self-contained page with the chart, a <noscript> table, the breaks, and separate lines per panel', async () => {
    const r = await historyStep({ comparisons: files, out: path.join(dir, 'out3') })
    const html = readFileSync(r.htmlPath, 'utf8')
    expect(html).toContain('<canvas id="chart-history"')
    expect(html).toContain('Chart.js v4.5.1')
    expect(/<script[^>]+src=|<link[^>]+href=/.test(html)).toBe(false)
    const noscript = /<noscript>(.*?)<\/noscript>/s.exec(html)![1]!
    expect(noscript.match(/<tr data-run=/g)).toHaveLength(8) // 4 runs × 2 cells
    expect(html).toContain('<li data-kind="gap">')
    expect(html).toContain('<li data-kind="panel_changed">')
    const data = JSON.parse(/id="hw-history">(.*?)<\/script>/s.exec(html)![1]!)
    // a "(gap)" slot breaks the line between w2 and w4
    expect(data.labels).toEqual([
      'w1 (2026-11-02)',
      'w2 (2026-11-09)',
      '(gap)',
      'w4 (2026-11-23)',
      'w5 (2026-11-30)',
    ])
    const labels = data.series.map((s: { label: string }) => s.label)
    expect(labels).toEqual(['a · panel 1', 'b · panel 1', 'a · panel 2', 'b · panel 2'])
    const b1 = data.series[1].values
    expect(b1[2]).toBeNull()
    expect(b1[4]).toBeNull() // panel 1's line has no value on the panel-2 run
    expect(data.series[3].values.slice(0, 4)).toEqual([null, null, null, null])
  })

  it('escapes text from the files', async () => {
    const c = ComparisonSchema.parse(JSON.parse(readFileSync(files[0]!, 'utf8')))
    c.cells[1]!.version_declared = '<img src=x onerror=alert(1)>'
    const evil = path.join(dir, 'evil')
    mkdirSync(evil, { recursive: true })
    writeFileSync(path.join(evil, 'comparison.json'), strictJson(c))
    const r = await historyStep({
      comparisons: [path.join(evil, 'comparison.json'), files[1]!],
      out: path.join(dir, 'out4'),
    })
    const html = readFileSync(r.htmlPath, 'utf8')
    expect(html).not.toContain('<img src=x')
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;')
  })
})

describe('harness-watch history: errors are located, never a stack trace', () => {
  const io = captureOutput()

  it('a malformed comparison.json names the file and line', async () => {
    const bad = path.join(dir, 'bad.json')
    writeFileSync(bad, '{\n  "schema_version": 1,\n  "kind": "experiment",\n  oops\n}\n')
    const code = await main(['history', files[0]!, bad, '--out', path.join(dir, 'o-bad')])
    expect(code).toBe(2)
    expect(io.err).toContain(`${bad}:4 `)
    expect(io.err).toContain('not valid JSON')
    expect(io.err).not.toMatch(/\n\s+at /)
  })

  it('a comparison.json with a wrong field names the file, line and field', async () => {
    const c = JSON.parse(readFileSync(files[0]!, 'utf8'))
    c.round = 'first'
    const bad = path.join(dir, 'wrong-field.json')
    writeFileSync(bad, JSON.stringify(c, null, 2))
    const line =
      JSON.stringify(c, null, 2)
        .split('\n')
        .findIndex((l) => l.includes('"round"')) + 1
    const code = await main(['history', bad, '--out', path.join(dir, 'o-field')])
    expect(code).toBe(2)
    expect(io.err).toContain(`${bad}:${line} `)
    expect(io.err).toContain('round')
    expect(io.err).not.toMatch(/\n\s+at /)
  })

  it('another experiment, a missing file and a bad cadence are refused with the file named', async () => {
    const other = JSON.parse(readFileSync(files[0]!, 'utf8'))
    other.experiment_id = 'exp-other'
    mkdirSync(path.join(dir, 'other'), { recursive: true })
    const f = path.join(dir, 'other', 'comparison.json')
    writeFileSync(f, strictJson(other))
    expect(await main(['history', files[0]!, f, '--out', path.join(dir, 'o-x')])).toBe(2)
    expect(io.err).toContain(`${f} experiment exp-other is not exp-a`)
    io.err = ''
    const missing = path.join(dir, 'nope', 'comparison.json')
    expect(await main(['history', missing, '--out', path.join(dir, 'o-y')])).toBe(2)
    expect(io.err).toContain(`${missing} cannot read comparison.json: ENOENT`)
    io.err = ''
    expect(await main(['history', files[0]!, '--cadence-days', 'weekly'])).toBe(2)
    expect(io.err).toContain('--cadence-days must be a positive number of days, got "weekly"')
  })

  it('the same run twice, and a decision.json of another run beside a comparison, are refused', async () => {
    expect(await main(['history', files[0]!, files[0]!, '--out', path.join(dir, 'o-dup')])).toBe(2)
    expect(io.err).toContain(`${files[0]!} run w1 round 0 is given twice (also ${files[0]!})`)
    io.err = ''
    const mixed = path.join(dir, 'mixed')
    mkdirSync(mixed, { recursive: true })
    writeFileSync(path.join(mixed, 'comparison.json'), readFileSync(files[0]!, 'utf8'))
    writeFileSync(path.join(mixed, 'decision.json'), strictJson(w2Decision))
    expect(
      await main(['history', path.join(mixed, 'comparison.json'), '--out', path.join(dir, 'o-mixed')]),
    ).toBe(2)
    expect(io.err).toContain(
      `${path.join(mixed, 'decision.json')} decision.json is of run exp-a/w2 round 0, its comparison.json of exp-a/w1 round 0`,
    )
  })

  it('a forged resolve rate outside 0–1 is refused at its file, line and field, never a NaN or a stack trace', async () => {
    const c = JSON.parse(readFileSync(files[0]!, 'utf8'))
    c.cells[0].resolve_rate.value = 1e308
    const text = JSON.stringify(c, null, 2)
    const bad = path.join(dir, 'forged-rate.json')
    writeFileSync(bad, text)
    const line = text.split('\n').findIndex((l) => l.includes('"value": 1e+308')) + 1
    expect(line).toBeGreaterThan(0)
    const code = await main(['history', bad, '--out', path.join(dir, 'o-forged-rate')])
    expect(code).toBe(2)
    expect(io.err).toContain(`${bad}:${line} `)
    expect(io.err).toContain('resolve_rate.value')
    expect(io.err).not.toContain('non-finite')
    expect(io.err).not.toMatch(/\n\s+at /)
  })

  it('an --out that is a file is a located usage error, never a bare system error', async () => {
    const file = path.join(dir, 'not-a-folder')
    writeFileSync(file, '')
    expect(await main(['history', files[0]!, '--out', file])).toBe(2)
    expect(io.err).toContain(`${file} cannot write the history into --out ${file}: EEXIST`)
    expect(io.err).toContain('--out names a folder')
  })

  it('a run without an id given twice by the same file is refused, never counted twice', async () => {
    const c = JSON.parse(readFileSync(files[0]!, 'utf8'))
    c.run_id = null
    mkdirSync(path.join(dir, 'no-id'), { recursive: true })
    const f = path.join(dir, 'no-id', 'comparison.json')
    writeFileSync(f, strictJson(c))
    expect(await main(['history', f, f, '--out', path.join(dir, 'o-no-id')])).toBe(2)
    expect(io.err).toContain(`${f} this comparison.json is given twice`)
  })

  it('a start time that is not a date is unknown: placed last and marked, never sorted as text', async () => {
    const c = JSON.parse(readFileSync(files[1]!, 'utf8'))
    c.stamp.started_at = '0000-not-a-date'
    c.run_id = 'w-bad-time'
    mkdirSync(path.join(dir, 'bad-time'), { recursive: true })
    const f = path.join(dir, 'bad-time', 'comparison.json')
    writeFileSync(f, strictJson(c))
    const r = await historyStep({ comparisons: [f, files[0]!], out: path.join(dir, 'o-bad-time') })
    expect(r.history.runs.map((x) => [x.run_id, x.break_before?.kind ?? null])).toEqual([
      ['w1', null],
      ['w-bad-time', 'time_unknown'],
    ])
    expect(r.history.runs[1]!.break_before!.detail).toContain('"0000-not-a-date" is not a date')
    expect(r.history.runs[1]!.change_points).toEqual([])
  })

  it('runs are ordered by time, not by the text of their start (time zones differ)', async () => {
    const c = JSON.parse(readFileSync(files[1]!, 'utf8'))
    // 2026-11-02T07:00+05:00 is 02:00Z: before w1 (06:00Z) although its text sorts after it
    c.stamp.started_at = '2026-11-02T07:00:00+05:00'
    c.run_id = 'w-early'
    mkdirSync(path.join(dir, 'tz'), { recursive: true })
    const f = path.join(dir, 'tz', 'comparison.json')
    writeFileSync(f, strictJson(c))
    const r = await historyStep({ comparisons: [files[0]!, f], out: path.join(dir, 'o-tz') })
    expect(r.history.runs.map((x) => x.run_id)).toEqual(['w-early', 'w1'])
  })

  it('a run without a start time is placed last and marked as a break, never guessed', async () => {
    const c = JSON.parse(readFileSync(files[1]!, 'utf8'))
    c.stamp.started_at = null
    c.run_id = 'w-undated'
    mkdirSync(path.join(dir, 'undated'), { recursive: true })
    const f = path.join(dir, 'undated', 'comparison.json')
    writeFileSync(f, strictJson(c))
    const r = await historyStep({ comparisons: [f, files[0]!], out: path.join(dir, 'o-undated') })
    expect(r.history.runs.map((x) => [x.run_id, x.break_before?.kind ?? null])).toEqual([
      ['w1', null],
      ['w-undated', 'time_unknown'],
    ])
    // w-undated has w2's outcomes (b lost 8 instances), but its place in time is unknown: no test
    expect(r.history.runs[1]!.change_points).toEqual([])
  })

  it('prints what it wrote', async () => {
    const out = path.join(dir, 'o-ok')
    expect(await main(['history', ...files, '--out', out])).toBe(0)
    expect(io.out).toBe(
      `4 run(s), 2 panel segment(s), 2 break(s)\nwrote ${path.join(out, 'history.html')}\nwrote ${path.join(out, 'history.json')}\n` +
        `link it from a run's reports: --history-url ${path.join(out, 'history.html')} (aggregate, detect, confirm, local)\n`,
    )
  })
})

const CHROMIUM = '/usr/bin/chromium'
if (!existsSync(CHROMIUM)) console.warn(`history.html browser test skipped: ${CHROMIUM} is not installed`)

describe.skipIf(!existsSync(CHROMIUM))('history.html in headless Chromium', () => {
  it('draws one line per cell and panel, with no error and no request off the page', async () => {
    const r = await historyStep({ comparisons: files, out: path.join(dir, 'out-browser') })
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--no-first-run',
      ],
    })
    try {
      const page = await browser.newPage()
      const errors: string[] = []
      const requests: string[] = []
      page.on('pageerror', (e) => errors.push(e.message))
      page.on('request', (req) => {
        if (!req.url().startsWith('file:')) requests.push(req.url())
      })
      await page.goto(`file://${r.htmlPath}`)
      await page.waitForFunction(
        () => document.querySelector('#chart-history[data-drawn="true"]') !== null,
        null,
        {
          timeout: 30_000,
        },
      )
      const lines = await page.evaluate(() => {
        const w = window as unknown as {
          Chart: { getChart(id: string): { data: { datasets: Array<{ type: string; data: unknown[] }> } } }
        }
        return w.Chart.getChart('chart-history')
          .data.datasets.filter((d) => d.type === 'line')
          .map((d) => d.data)
      })
      expect(errors).toEqual([])
      expect(requests).toEqual([])
      // b on panel 1: 83.3%, 16.7%, (gap), 16.7%, — ; b on panel 2: only the last run
      expect(lines).toHaveLength(4)
      expect(
        (lines[1] as Array<number | null>).map((v) => (v === null ? null : Math.round(v * 1000) / 1000)),
      ).toEqual([0.833, 0.167, null, 0.167, null])
      expect(
        (lines[3] as Array<number | null>).map((v) => (v === null ? null : Math.round(v * 1000) / 1000)),
      ).toEqual([null, null, null, null, 0.231])
    } finally {
      await browser.close()
    }
  }, 120_000)
})
