// A forged decision.json / comparison.json (a fork's artifacts are attacker-controlled) put through
// every renderer that reaches GitHub or a browser: the PR comment, the tracking issue body and its
// comments, the job summary (publish, dry run), report.md and report.html. Every free-text field the
// schemas accept is set to live Markdown/HTML (an <img> to an outside host, an @team ping, a link,
// an HTML comment, a heading, backticks, pipes and newlines); the rendered bodies must contain none
// of it live. Paths named by the artifact must stay inside the download folder.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { DecisionSchema } from '../../src/detect/schema.js'
import { publish } from '../../src/github/publish.js'
import {
  confirmedComment,
  prCommentBody,
  recoveredComment,
  trackingIssueBody,
} from '../../src/github/render.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { strictJson } from '../../src/util/json.js'
import { breachingComparison, confirmedRun } from './support.js'

const PAYLOAD =
  '<img src=https://evil.example/p.png> @team [link](http://x) <!-- hidden --> \n# safe to merge `tick` | pipe |\n' +
  // Every kind of link GitHub makes of plain text: bare URLs, www., issue and cross-repo references,
  // GH- references and commit SHAs.
  ' https://evil.example/bare www.evil.example #4242 GH-4243 octo/repo#4244 deadbeefcafe1234 '

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

/** Every string leaf the schema still accepts as PAYLOAD (enums, patterns and ids keep their value). */
function poison<T>(value: T, schema: z.ZodType, keep: (p: string) => boolean = () => false): T {
  const doc = JSON.parse(JSON.stringify(value)) as Json
  const leaves: { parent: Record<string, Json> | Json[]; key: string | number; at: string }[] = []
  const walk = (v: Json, at: string) => {
    const visit = (parent: Record<string, Json> | Json[], key: string | number, x: Json, here: string) => {
      if (typeof x === 'string') leaves.push({ parent, key, at: here })
      else walk(x, here)
    }
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) visit(v, i, x, `${at}[${i}]`)
    } else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) visit(v, k, x, `${at}.${k}`)
    }
  }
  walk(doc, '')
  let poisoned = 0
  for (const l of leaves) {
    if (keep(l.at)) continue
    const p = l.parent as Record<string | number, Json>
    const old = p[l.key] as string
    p[l.key] = `${PAYLOAD}${old}`
    if (schema.safeParse(doc).success) poisoned++
    else p[l.key] = old
  }
  expect(poisoned).toBeGreaterThan(20)
  return schema.parse(doc) as T
}

/** Markdown with inline code spans removed (their content is shown verbatim, never live). */
function outsideCode(md: string): string {
  return md.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, ' ')
}

/** The live forms of the payload that must never appear in Markdown we publish. */
function expectInertMarkdown(md: string, where: string) {
  const text = outsideCode(md)
  expect(text, where).not.toMatch(/<img/i)
  expect(text, where).not.toMatch(/<!-- hidden/)
  // Our own markers are the only HTML comments, each on its own line at the top.
  for (const m of text.matchAll(/<!--/g)) {
    const line = text.slice(text.lastIndexOf('\n', m.index) + 1, text.indexOf('\n', m.index))
    expect(line, where).toMatch(/^<!-- harness-watch:v1 (kind|state)=/)
  }
  expect(text, where).not.toMatch(/@team/)
  expect(text, where).not.toMatch(/(?<!\\)\[link(?<!\\)\]\(/)
  expect(text, where).not.toMatch(/^\s*#+ safe to merge/m)
  expect(text, where).not.toMatch(/https?:\/\/evil/)
  expect(text, where).not.toMatch(/www\.evil/)
  expect(text, where).not.toMatch(/#4242|GH-4243|#4244/i)
  expect(text, where).not.toMatch(/[0-9a-f]{7}/i)
  // Every table keeps its shape: each row has as many unescaped pipes as its header.
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('|')) continue
    const cells = (s: string) => s.replace(/\\\|/g, '').split('|').length
    const header = cells(lines[i]!)
    for (; i < lines.length && lines[i]!.startsWith('|'); i++)
      expect(cells(lines[i]!), `${where}: ${lines[i]}`).toBe(header)
  }
}

function expectInertHtml(html: string, where: string) {
  expect(html, where).not.toMatch(/<img src=https:\/\/evil/i)
  expect(html, where).not.toMatch(/<!-- hidden/)
  expect(html, where).not.toContain('href="http://x"')
}

const ids = (p: string) =>
  // Ids that name markers and files are checked where they are used (identityMarker refuses them).
  /^\.(experiment_id|comparisons\[\d+\]\.key|signals\[\d+\]\.key|runs\[\d+\]\.(comparison|comparison_sha256)|confirmation\.plan)$/.test(
    p,
  )

describe('a forged decision.json and comparison.json render inert everywhere', () => {
  const decision = poison(confirmedRun(), DecisionSchema, ids)
  const comparison = poison(breachingComparison, ComparisonSchema, (p) => /^\.experiment_id$/.test(p))
  const ctx = { decision, comparison, reportUrl: 'javascript:alert(1)' }
  const key = decision.comparisons[0]!.key

  it('the PR comment', () => {
    expectInertMarkdown(prCommentBody(ctx, decision.experiment_id), 'PR comment')
  })

  it('the tracking issue body and its comments', () => {
    const state = {
      clean_runs: 0,
      confirmed_breaches: 1,
      last_status: 'confirmed',
      last_run: null,
      recovered: false,
    }
    expectInertMarkdown(trackingIssueBody(ctx, key, state), 'issue body')
    expectInertMarkdown(confirmedComment(ctx, key, true), 'confirmed comment')
    expectInertMarkdown(
      recoveredComment(ctx, { ...state, recovered: true, clean_runs: 3 }, true),
      'recovered',
    )
    // A non-http(s) report URL is never linked.
    expect(prCommentBody(ctx, decision.experiment_id)).not.toContain('](javascript:')
  })

  it('report.md and report.html', () => {
    const view = { decision }
    expectInertMarkdown(renderMarkdownReport(comparison, { decision: view }), 'report.md')
    expectInertHtml(renderHtmlReport(comparison, { decision: view }), 'report.html')
  })

  it('the job summary of publish (dry run, and without a token) read from the forged files', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-forged-'))
    const out = path.join(dir, 'hw-out')
    mkdirSync(out)
    writeFileSync(path.join(out, 'comparison.json'), strictJson(comparison))
    const first = { ...decision, runs: decision.runs.map((r) => ({ ...r, comparison: 'comparison.json' })) }
    writeFileSync(path.join(out, 'decision.json'), strictJson(first))
    for (const pr of [7, null]) {
      const dry = await publish({
        comparison: path.join(out, 'comparison.json'),
        token: '',
        pr,
        dryRun: true,
        root: dir,
      })
      expectInertMarkdown(dry.summary, `dry-run summary (pr ${pr})`)
      const none = await publish({ comparison: path.join(out, 'comparison.json'), token: '', pr, root: dir })
      expectInertMarkdown(none.summary, `summary (pr ${pr})`)
      for (const a of dry.planned) if (a.body) expectInertMarkdown(a.body, `planned body (pr ${pr})`)
    }
  })

  it('a forged experiment id or comparison key cannot become a marker: publishing refuses it', () => {
    const bad = { ...decision, experiment_id: 'x --> <img src=https://evil.example/p.png>' }
    expect(() => prCommentBody({ ...ctx, decision: bad }, bad.experiment_id)).toThrow(/invalid marker key/)
  })
})

describe('paths named by an artifact stay inside the download folder', () => {
  async function publishWith(runPath: string, setup?: (dir: string) => void) {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-paths-'))
    const out = path.join(dir, 'hw-out')
    mkdirSync(out)
    setup?.(dir)
    const d = confirmedRun()
    d.runs[0] = { ...d.runs[0]!, comparison: runPath }
    writeFileSync(path.join(out, 'comparison.json'), strictJson(breachingComparison))
    writeFileSync(path.join(out, 'decision.json'), strictJson(d))
    return publish({ comparison: path.join(out, 'comparison.json'), token: '', dryRun: true, root: dir })
  }

  it('refuses `..` out of the folder, an absolute path and a symlink that leads out', async () => {
    await expect(publishWith('../../../etc/passwd')).rejects.toThrow(/leads outside .*: refused/)
    await expect(publishWith('/etc/passwd')).rejects.toThrow(/is an absolute path/)
    await expect(
      publishWith('link/comparison.json', (dir) => symlinkSync(tmpdir(), path.join(dir, 'hw-out', 'link'))),
    ).rejects.toThrow(/leads outside/)
  })

  it('accepts a path to a sibling folder inside it (the first run beside the rerun)', async () => {
    const r = await publishWith('../hw-out/comparison.json')
    expect(r.decision.status).toBe('confirmed')
  })
})
