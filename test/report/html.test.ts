import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { attempt, ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'

const CHROMIUM = '/usr/bin/chromium'
const haveChromium = existsSync(CHROMIUM)
if (!haveChromium)
  console.warn(`report.html browser test skipped: ${CHROMIUM} is not installed (apt-get install chromium)`)

describe('report.html is self-contained', () => {
  it('inlines Chart.js and the matrix plugin and references nothing on the network', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(5) } })
    const r = await aggregate({
      plan: writePlan(plan),
      artifacts: writeArtifacts(plan, pairedOutcomes(plan, { both: 2, bOnly: 1, cOnly: 1, neither: 1 })),
      out: mkdtempSync(path.join(tmpdir(), 'hw-html-')),
      resamples: 300,
    })
    const html = renderHtmlReport(r.comparison)
    expect(html).toContain('Chart.js v4.5.1')
    expect(html).toContain('chartjs-chart-matrix v3.1.0')
    // Booleans, not the 200 kB string, in a failure message.
    expect(/<script[^>]+src=|<link[^>]+href=|sourceMappingURL|@import/.test(html)).toBe(false)
    expect(/(src|href|action)\s*=\s*["']?(https?:)?\/\//i.test(html)).toBe(false)
  })
})

describe.skipIf(!haveChromium)('report.html in headless Chromium', () => {
  let browser: Awaited<ReturnType<typeof chromium.launch>>
  let file: string
  const requests: string[] = []

  beforeAll(async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(40) } })
    const atts = pairedOutcomes(plan, { both: 20, bOnly: 6, cOnly: 9, neither: 5 })
    // one infra error so the grid has a third colour and the status filter has two values
    const x = atts.find((a) => a.cell_id === 'b' && a.instance_id === 't-040')!
    Object.assign(
      x,
      attempt(plan, { cell: 'b', instance: 't-040', outcome: 'infra_error', exit: { class: 'infra' } }),
    )
    const r = await aggregate({
      plan: writePlan(plan),
      artifacts: writeArtifacts(plan, atts),
      out: mkdtempSync(path.join(tmpdir(), 'hw-html-')),
      resamples: 500,
    })
    file = r.htmlPath
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
      ],
    })
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
  })

  it('renders the table, sorts and filters it, and draws the four charts', async () => {
    const page = await browser.newPage()
    const errors: string[] = []
    page.on('pageerror', (e) => errors.push(e.message))
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text())
    })
    page.on('request', (req) => {
      if (!req.url().startsWith('file:')) requests.push(req.url())
    })
    await page.goto(`file://${file}`)
    await page.waitForFunction(
      () => document.querySelectorAll('canvas[data-drawn="true"]').length === 4,
      null,
      {
        timeout: 30_000,
      },
    )
    expect(errors).toEqual([])
    expect(requests).toEqual([])

    // table: one row per instance
    const rowCount = () => page.locator('#instance-table tbody tr:not([hidden])').count()
    expect(await rowCount()).toBe(40)

    // filter by id, by status, by outcome
    await page.fill('#filter-text', 't-01')
    expect(await rowCount()).toBe(10)
    await page.fill('#filter-text', '')
    await page.selectOption('#filter-status', 'incomplete')
    expect(await rowCount()).toBe(1)
    expect(await page.locator('#instance-table tbody tr:not([hidden]) td').first().textContent()).toBe(
      't-040',
    )
    await page.selectOption('#filter-status', '')
    await page.selectOption('#filter-outcome', 'infra_error')
    expect(await rowCount()).toBe(1)
    await page.selectOption('#filter-outcome', '')
    expect(await page.textContent('#shown-count')).toBe('40')

    // sort by the baseline spend column (cell a: outcome, spend, requests, wall → column 3)
    const spendOfRows = () =>
      page.$$eval('#instance-table tbody tr', (trs) =>
        trs.map((tr) => Number((tr as HTMLTableRowElement).cells[3]!.getAttribute('data-v'))),
      )
    const header = page.locator('#instance-table thead th').nth(3)
    await header.click()
    const asc = await spendOfRows()
    expect(asc).toEqual([...asc].sort((p, q) => p - q))
    expect(await header.getAttribute('aria-sort')).toBe('ascending')
    await header.click()
    const desc = await spendOfRows()
    expect(desc).toEqual([...asc].sort((p, q) => q - p))

    // charts drew: each canvas has non-blank pixels of more than one colour
    for (const id of ['chart-scatter', 'chart-forest', 'chart-grid', 'chart-pareto']) {
      const stats = await page.$eval(`#${id}`, (el) => {
        const c = el as HTMLCanvasElement
        const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data
        let painted = 0
        const colours = new Set<number>()
        for (let i = 0; i < d.length; i += 4) {
          if (d[i + 3]! > 0) {
            painted++
            colours.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!)
          }
        }
        return { painted, colours: colours.size, w: c.width, h: c.height }
      })
      expect(stats.painted, id).toBeGreaterThan(500)
      expect(stats.colours, id).toBeGreaterThan(2)
    }
    // the outcome grid holds one cell per (instance, cell); the forest one row per ratio with an interval
    const points = await page.evaluate(() => {
      const w = window as unknown as {
        Chart: { getChart(id: string): { data: { datasets: Array<{ data: unknown[] }> } } }
      }
      return {
        grid: w.Chart.getChart('chart-grid').data.datasets[0]!.data.length,
        scatter: w.Chart.getChart('chart-scatter').data.datasets[0]!.data.length,
        forest: w.Chart.getChart('chart-forest').data.datasets[0]!.data.length,
        // the Pareto chart: the frontier line, then one dataset of one point per cell
        pareto: w.Chart.getChart('chart-pareto')
          .data.datasets.slice(-3)
          .map((d) => d.data.length),
        paretoLabels: (
          w.Chart.getChart('chart-pareto').data.datasets.slice(-2) as unknown as Array<{ label: string }>
        ).map((d) => d.label),
      }
    })
    expect(points.pareto).toEqual([2, 1, 1])
    // b resolves more and spends more than a: neither dominates
    expect(points.paretoLabels).toEqual(['a (frontier)', 'b (frontier)'])
    expect(points.grid).toBe(80)
    expect(points.scatter).toBe(39)
    expect(points.forest).toBeGreaterThanOrEqual(5)

    // A screenshot of each chart as the browser composited it: a PNG whose pixels are not one flat
    // colour (a chart that failed to draw screenshots as its blank background).
    await page.evaluate(() => document.fonts.ready)
    for (const id of ['chart-scatter', 'chart-forest', 'chart-grid', 'chart-pareto']) {
      const png = await page.locator(`#${id}`).screenshot()
      expect(png.subarray(1, 4).toString('latin1'), id).toBe('PNG')
      const colours = await page.evaluate(async (b64) => {
        const img = new Image()
        img.src = `data:image/png;base64,${b64}`
        await img.decode()
        const cv = document.createElement('canvas')
        cv.width = img.width
        cv.height = img.height
        const ctx = cv.getContext('2d')!
        ctx.drawImage(img, 0, 0)
        const d = ctx.getImageData(0, 0, cv.width, cv.height).data
        const seen = new Set<number>()
        for (let i = 0; i < d.length; i += 4) seen.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!)
        return seen.size
      }, png.toString('base64'))
      expect(colours, id).toBeGreaterThan(10)
    }
    await page.screenshot({ path: path.join(path.dirname(file), 'report.png'), fullPage: true })
    await page.close()
  }, 120_000)

  it('without JavaScript every chart is a <noscript> table of its data', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(`file://${file}`)
    const tables = await page.$$eval('figure.chart table.chart-data', (ts) =>
      ts.map((t) => ({
        cls: t.className,
        rows: t.querySelectorAll('tbody tr').length,
        visible: (t as HTMLElement).offsetHeight > 0,
      })),
    )
    expect(tables.map((t) => t.cls)).toEqual([
      'chart-data pareto',
      'chart-data scatter',
      'chart-data forest',
      'chart-data grid',
    ])
    expect(tables.every((t) => t.visible)).toBe(true)
    // The same data the charts draw: 39 paired points, 40 instances, a row per plotted ratio.
    expect(tables[0]!.rows).toBe(2)
    expect(tables[1]!.rows).toBe(39)
    expect(tables[3]!.rows).toBe(40)
    expect(tables[2]!.rows).toBeGreaterThanOrEqual(5)
    await context.close()
  }, 60_000)
})
