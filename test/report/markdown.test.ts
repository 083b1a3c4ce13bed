import { describe, expect, it } from 'vitest'
import { buildComparison } from '../../src/compare/build.js'
import type { PublishedInstance, PublishedSystem } from '../../src/ingest/published/formats.js'
import { publishedInput } from '../../src/ingest/published/input.js'
import {
  fitSections,
  GITHUB_BODY_LIMIT,
  JOB_SUMMARY_LIMIT,
  truncateUtf8,
  truncateUtf16,
  utf8Length,
} from '../../src/report/budget.js'
import { ZWJ } from '../../src/report/escape.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { jobSummary } from '../../src/report/summary.js'

/** A published system over `ids`; `resolved(i)` and `cost(i)` per instance. */
function system(
  name: string,
  ids: string[],
  resolved: (i: number) => boolean,
  cost: (i: number) => number,
): PublishedSystem {
  const instances = new Map<string, PublishedInstance>()
  ids.forEach((id, i) => {
    instances.set(id, {
      trials: [resolved(i) ? 'resolved' : 'unresolved'],
      costUsd: cost(i),
      requests: 10 + (i % 9),
    })
  })
  return {
    name,
    format: 'openhands-instance-results',
    source: `${name}/instance_results/x.json`,
    harness: name,
    harnessVersion: '1.0.0',
    model: 'm-1',
    benchmark: 'x',
    date: null,
    instances,
    declaredTotal: null,
    absentIsUnresolved: false,
    notes: [],
  }
}

/** No lone surrogate anywhere (a split multibyte character). */
function wellFormed(s: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)
}

describe('report.md size budget (F13)', () => {
  // 3,000 instances with CJK and emoji ids: the per-instance table alone is far over 65,536 characters.
  const ids = Array.from({ length: 3000 }, (_, i) => `任务-${String(i).padStart(4, '0')}-测试🧪✓✗`)
  const c = buildComparison(
    publishedInput(
      system(
        'alpha',
        ids,
        (i) => i % 3 !== 0,
        (i) => 0.1 + (i % 13) / 10,
      ),
      system(
        'beta',
        ids,
        (i) => i % 4 !== 0,
        (i) => 0.2 + (i % 7) / 10,
      ),
      { resamples: 500 },
    ),
  )

  it('fits 65,536 characters, keeps the headline and scope, closes <details>, never splits a character', () => {
    const md = renderMarkdownReport(c)
    expect(md.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT)
    expect(md.length).toBeGreaterThan(GITHUB_BODY_LIMIT - 5000) // it used the room it had
    expect(wellFormed(md)).toBe(true)
    expect(md).toContain('## Outcome')
    expect(md).toContain('| `alpha` → `beta` | 3000 |')
    expect(md).toMatch(/Shortened to fit 65,536 characters: .*instances/)
    expect(md.trimEnd().endsWith('(see the minimum detectable effect).')).toBe(true)
    expect((md.match(/<details>/g) ?? []).length).toBe((md.match(/<\/details>/g) ?? []).length)
    // the table was cut at a row boundary: every table line is a whole row
    for (const line of md.split('\n').filter((l) => l.startsWith('| `任务'))) {
      expect(line.endsWith('|')).toBe(true)
      expect(line.split(' | ').length).toBe(4)
    }
    expect(md).toMatch(/… \d+ more rows in the full report\./)
  })

  it('also fits a smaller budget with a reserve for a publisher’s marker', () => {
    const md = renderMarkdownReport(c, {
      limit: 20_000,
      reserve: 200,
      fullReport: 'https://example.test/run/1',
    })
    expect(md.length).toBeLessThanOrEqual(19_800)
    expect(wellFormed(md)).toBe(true)
    expect(md).toContain('<https://example.test/run/1>')
    expect(md).toContain('## Scope')
  })

  it('the job summary stays under 1 MiB', () => {
    const md = renderMarkdownReport(c)
    expect(utf8Length(jobSummary(md))).toBeLessThan(JOB_SUMMARY_LIMIT)
    const huge = '✓任务🧪'.repeat(200_000)
    const cut = jobSummary(huge)
    expect(utf8Length(cut)).toBeLessThanOrEqual(JOB_SUMMARY_LIMIT - 4096)
    expect(wellFormed(cut)).toBe(true)
    expect(cut).toContain('cut at the 1 MiB limit')
  })
})

describe('budget helpers', () => {
  it('truncate at character boundaries (UTF-16 and UTF-8)', () => {
    const s = 'ab🧪c'
    expect(truncateUtf16(s, 3)).toBe('ab') // would split the surrogate pair
    expect(truncateUtf16(s, 4)).toBe('ab🧪')
    expect(truncateUtf8('✓✓', 4)).toBe('✓') // ✓ is 3 bytes
    expect(truncateUtf8('测试', 5)).toBe('测')
    expect(truncateUtf8('a🧪', 4)).toBe('a')
  })

  it('drops whole sections from the bottom, keeps `keep` sections, and closes a cut table', () => {
    const rows = Array.from({ length: 100 }, (_, i) => `| r${i} | ✓ |\n`)
    const out = fitSections(
      [
        { id: 'head', text: '# T\n', keep: true },
        { id: 'table', head: '<details>\n\n| a | b |\n|---|---|\n', rows, tail: '\n</details>\n' },
        { id: 'after', text: 'x'.repeat(500) },
      ],
      { limit: 600, pointer: (o) => `> left out: ${o.join(', ')}\n`, footer: 'END\n' },
    )
    expect(out.text.length).toBeLessThanOrEqual(600)
    expect(out.omitted).toEqual(['table', 'after'])
    expect(out.text).toContain('</details>')
    expect(out.text).toMatch(/more rows in the full report/)
    expect(out.text.endsWith('END\n')).toBe(true)
    expect(out.text.indexOf('</details>')).toBeLessThan(out.text.indexOf('more rows'))
  })
})

describe('report.md escaping of run text', () => {
  it('quotes ids, harness and model names without HTML, pings or broken tables', () => {
    const ids = ['<img src=x onerror=alert(1)>', '@octocat', 'a|b', 'plain-1']
    const a = system(
      '<script>x</script>',
      ids,
      () => true,
      () => 0.1,
    )
    const b = {
      ...system(
        '@team',
        ids,
        (i) => i > 1,
        () => 0.2,
      ),
      model: '@evil <b>bold</b>',
    }
    const md = renderMarkdownReport(buildComparison(publishedInput(a, b, { resamples: 200 })))
    // Outside code spans (which render verbatim) there is no raw HTML and no live mention.
    const prose = md.replace(/`[^`\n]*`/g, '')
    expect(prose).not.toMatch(/<img|<script|<b>/)
    expect(prose).not.toMatch(new RegExp(`@(?!${ZWJ})[A-Za-z]`))
    expect(md).toContain('`@octocat`')
    expect(md).toContain('`a\\|b`')
    expect(md).toContain(`@${ZWJ}evil &lt;b&gt;bold&lt;/b&gt;`)
  })
})
