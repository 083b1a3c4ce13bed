import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { aggregate } from '../../src/pipeline/aggregate.js'
import { detectStep } from '../../src/pipeline/detect.js'
import { historySource } from '../../src/pipeline/history.js'
import type { Comparison } from '../../src/records/comparison.js'
import { linkTarget } from '../../src/report/escape.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { historyLinkFrom } from '../../src/report/write.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'
import { captureOutput } from '../support/capture.js'

const io = captureOutput()
const tmp = (p: string) => mkdtempSync(path.join(tmpdir(), `hw-histlink-${p}-`))

/** A real comparison (aggregated from a fixture run), for rendering. */
async function comparison(): Promise<{ c: Comparison; plan: string; artifacts: string }> {
  const p = await makePlan({ panel: { source: 'inline', instances: ids(6) } })
  const plan = writePlan(p)
  const artifacts = writeArtifacts(p, pairedOutcomes(p, { both: 3, bOnly: 1, cOnly: 1, neither: 1 }))
  const r = await aggregate({ plan, artifacts, out: tmp('agg'), resamples: 200 })
  return { c: r.comparison, plan, artifacts }
}

const count = (text: string, part: string) => text.split(part).length - 1
const RUN = 'https://github.com/acme/widgets/actions/runs/7'

describe('reports: the link to the weekly history', () => {
  it('a history URL is linked exactly once in report.md and report.html, with where the page is', async () => {
    const { c } = await comparison()
    const history = { href: RUN, artifact: 'harness-watch-history-exp-a-c7cb7540' }
    const md = renderMarkdownReport(c, { history })
    expect(count(md, `](${RUN})`)).toBe(1)
    expect(md).toContain(
      `History: [weekly history](${RUN}): \`history.html\` in the artifact \`harness-watch-history-exp-a-c7cb7540\` of this run, built after this report (none when the history could not be built).`,
    )
    const html = renderHtmlReport(c, { history })
    expect(count(html, `href="${RUN}"`)).toBe(1)
    expect(html).toContain(
      `<p class="history">History: <a href="${RUN}">weekly history</a>: <code>history.html</code> in the artifact <code>harness-watch-history-exp-a-c7cb7540</code> of this run, built after this report (none when the history could not be built).</p>`,
    )
    // A page linked directly: no artifact sentence.
    const direct = renderMarkdownReport(c, { history: { href: '../history/history.html' } })
    expect(direct).toContain('History: [weekly history](../history/history.html).\n')
  })

  it('without a history the reports name none (no dead link)', async () => {
    const { c } = await comparison()
    const md = renderMarkdownReport(c)
    const html = renderHtmlReport(c)
    expect(md).not.toMatch(/history/i)
    expect(html).not.toContain('class="history"')
    expect(html).not.toContain('weekly history')
  })

  it('a forged address is never a link target: shown inert, or refused', async () => {
    const { c } = await comparison()
    const forged = [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'https://x.test/a"onmouseover="alert(1)',
      "https://x.test/a'onmouseover='alert(1)",
      'https://x.test/a](javascript:alert(1))',
      'history.html)](javascript:alert(1)',
      'https://x.test/<script>',
      '//evil.test/history.html',
      '/etc/passwd',
      'https://x.test/a b',
      'vbscript:msgbox',
      'javascript&colon;alert&lpar;1&rpar;',
      '&#106;avascript&#58;alert&#40;1&#41;',
      '&#x6A;avascript&#x3A;x',
    ]
    for (const href of forged) {
      expect(linkTarget(href), href).toBeNull()
      const md = renderMarkdownReport(c, { history: { href } })
      expect(md, href).not.toContain('[weekly history](')
      expect(md, href).not.toMatch(/\]\((javascript|data|vbscript):/i)
      expect(md, href).toContain(
        'History: not linked (the address given is neither an http(s) URL nor a relative path).',
      )
      expect(md, href).not.toContain(href)
      const html = renderHtmlReport(c, { history: { href } })
      expect(html, href).not.toContain('weekly history</a>')
      expect(html, href).not.toMatch(/href="(javascript|data|vbscript|\/\/)/i)
      expect(html, href).not.toContain('"onmouseover')
      expect(html, href).not.toContain("'onmouseover")
      expect(html, href).not.toContain('<script>alert')
    }
    // A query's `&` is no character reference: linked as given.
    expect(linkTarget('https://x.test/runs?a=1&b=2')).toBe('https://x.test/runs?a=1&b=2')
    // The forged artifact name of a valid URL is quoted text, never markup.
    const html = renderHtmlReport(c, { history: { href: RUN, artifact: '<img src=x onerror=alert(1)>' } })
    expect(html).toContain('<code>&lt;img src=x onerror=alert(1)&gt;</code>')
    // Refused where it is given: the CLI and the action.
    for (const v of ['javascript:alert(1)', 'https://x.test/a"b', 'https://x.test/(x)', 'data:x'])
      await expect(historySource(v), v).rejects.toThrow(/history (URL|address)/)
    await expect(historySource(RUN, 'bad name/../x')).rejects.toThrow(/artifact name/)
    // An upper-case scheme is a URL like any other; an address too long for a report header is refused.
    expect(linkTarget('HTTPS://github.com/acme/widgets/actions/runs/7')).toBe(
      'HTTPS://github.com/acme/widgets/actions/runs/7',
    )
    await expect(historySource('HTTPS://github.com/acme/widgets/actions/runs/7')).resolves.toEqual({
      target: 'HTTPS://github.com/acme/widgets/actions/runs/7',
      artifact: null,
    })
    await expect(historySource(`${RUN}/${'a'.repeat(5000)}`)).rejects.toThrow(
      /5\d{3} characters long; at most 2048/,
    )
    await expect(historySource('', '')).resolves.toBeNull()
    await expect(historySource(RUN, 'harness-watch-history-e-k')).resolves.toEqual({
      target: RUN,
      artifact: 'harness-watch-history-e-k',
    })
  })

  it('a local history page is linked by its path relative to each report; one not written yet says so', async () => {
    const root = tmp('local')
    const page = path.join(root, 'history', 'history.html')
    expect(historyLinkFrom({ target: page }, path.join(root, 'week-1'))).toEqual({
      href: '../history/history.html',
      pending: true,
    })
    mkdirSync(path.dirname(page), { recursive: true })
    writeFileSync(page, '<!doctype html>')
    expect(historyLinkFrom({ target: page }, path.join(root, 'week-1', 'confirm-1'))).toEqual({
      href: '../../history/history.html',
      pending: false,
    })
    // A folder given is its history.html; odd characters in the path are percent-encoded.
    expect(await historySource(path.dirname(page))).toEqual({ target: page })
    expect(historyLinkFrom({ target: path.join(root, "it's (new)", 'history.html') }, root).href).toBe(
      'it%27s%20%28new%29/history.html',
    )
    const pending = renderMarkdownReport((await comparison()).c, {
      history: { href: '../history/history.html', pending: true },
    })
    expect(pending).toContain(
      'History: [weekly history](../history/history.html) (not written yet when this report was: `harness-watch history` writes it).',
    )
  })

  it('aggregate --history-url and detect --history-url: both reports link the page, also after the decision is written', async () => {
    const { plan, artifacts } = await comparison()
    const root = tmp('cli')
    const page = path.join(root, 'history', 'history.html')
    mkdirSync(path.dirname(page), { recursive: true })
    writeFileSync(page, '<!doctype html>')
    const out = path.join(root, 'week-1')
    const historyDir = path.join(root, 'history')
    expect(
      await main([
        'aggregate',
        '--plan',
        plan,
        '--artifacts',
        artifacts,
        '--out',
        out,
        '--history-url',
        historyDir,
      ]),
    ).toBe(0)
    const link = '[weekly history](../history/history.html).'
    expect(count(readFileSync(path.join(out, 'report.md'), 'utf8'), link)).toBe(1)
    expect(count(readFileSync(path.join(out, 'report.html'), 'utf8'), 'href="../history/history.html"')).toBe(
      1,
    )
    expect(
      await main([
        'detect',
        '--comparison',
        path.join(out, 'comparison.json'),
        '--plan',
        plan,
        '--history-url',
        page,
      ]),
    ).toBe(0)
    const md = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(md).toContain('## Decision')
    expect(count(md, link)).toBe(1)
    expect(count(readFileSync(path.join(out, 'report.html'), 'utf8'), 'href="../history/history.html"')).toBe(
      1,
    )
    // detect without it writes the reports again naming no history: nothing false, no dead link.
    await detectStep({ comparison: path.join(out, 'comparison.json'), plan })
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).not.toContain('weekly history')
    // A forged address is a usage error naming the option's value; nothing is written.
    const other = path.join(root, 'week-2')
    expect(
      await main([
        'aggregate',
        '--plan',
        plan,
        '--artifacts',
        artifacts,
        '--out',
        other,
        '--history-url',
        'javascript:alert(1)',
      ]),
    ).toBe(2)
    expect(io.err).toContain('the history address "javascript:alert(1)" is neither an http(s) URL nor a path')
    expect(() => readFileSync(path.join(other, 'report.md'))).toThrow()
  })

  it('local --history-url: a forged address is refused before anything runs', async () => {
    const out = path.join(tmp('local-cli'), 'o')
    expect(
      await main([
        'local',
        'no-such-manifest.yml',
        '--out',
        out,
        '--history-url',
        'https://x.test/"><script>',
      ]),
    ).toBe(2)
    expect(io.err).toContain('the history URL "https://x.test/"><script>" cannot be linked safely')
    expect(() => readFileSync(path.join(out, 'plan.json'))).toThrow()
  })
})
