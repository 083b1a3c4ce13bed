import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { allUnknown, known } from '../../src/capability/facts.js'
import { withPreviousCapabilities } from '../../src/capability/since-previous.js'
import { diffComparisons } from '../../src/compare/diff.js'
import { aggregate } from '../../src/pipeline/aggregate.js'
import type { Plan } from '../../src/plan/schema.js'
import type { CapabilityManifest } from '../../src/records/capabilities.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { renderDiffMarkdown } from '../../src/report/diff.js'
import { renderHtmlReport } from '../../src/report/html.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'

const HOSTILE = '<img src=x onerror=alert(1)>'

function manifest(
  cell: string,
  harness: string,
  version: string,
  tools: string[],
  compaction: boolean,
): CapabilityManifest {
  return {
    schema_version: 1,
    cell_id: cell,
    harness,
    harness_version: version,
    model: 'gpt-5-mini',
    configured: {
      ...allUnknown('not read'),
      compaction: known<'compaction'>(compaction, 'settings.json'),
      mcp_servers: known<'mcp_servers'>([], 'settings.json'),
    },
    observed: {
      requests: 10,
      requests_with_tools: 9,
      tools_named: true,
      tools: tools.map((name) => ({ name, schema_sha256: ['0123456789abcdef'], requests: 9 })),
      call_types: ['chat.completions'],
    },
  }
}

/** The artifacts with a capabilities.json beside each attempt; `write` decides each file's text (null: none). */
function artifactsWithCapabilities(
  plan: Plan,
  write: (cell: string, instance: string) => string | null,
): string {
  const atts = pairedOutcomes(plan, { both: 2, bOnly: 1, cOnly: 1, neither: 0 })
  const dir = writeArtifacts(plan, atts)
  for (const a of atts) {
    const leg = plan.legs.find((l) => l.cell === a.cell_id && l.instances.includes(a.instance_id))
    const logs = path.join(dir, leg?.artifact ?? '', a.logs_dir)
    mkdirSync(logs, { recursive: true })
    const text = write(a.cell_id, a.instance_id)
    if (text !== null) writeFileSync(path.join(logs, 'capabilities.json'), text)
  }
  return dir
}

describe('capabilities through aggregate into the report header', () => {
  it('lists the difference between cells, escaped in both reports', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const artifacts = artifactsWithCapabilities(plan, (cell) =>
      JSON.stringify(
        cell === 'a'
          ? manifest('a', 'pi', '0.73.1', ['bash', 'read'], false)
          : manifest('b', 'opencode', '1.18.33', ['bash', 'read', HOSTILE, '@octo-team'], true),
      ),
    )
    const out = mkdtempSync(path.join(tmpdir(), 'hw-cap-agg-'))
    const r = await aggregate({ plan: writePlan(plan), artifacts, out, resamples: 200 })
    const line = `a (pi 0.73.1) → b (opencode 1.18.33): +2 tools (${HOSTILE}, @octo-team), compaction on`
    expect(r.comparison.capabilities?.differences).toEqual([line])
    expect(r.comparison.capabilities?.cells.map((c) => [c.cell_id, c.attempts])).toEqual([
      ['a', 4],
      ['b', 4],
    ])
    expect(r.comparison.capabilities?.notes).toEqual([])
    ComparisonSchema.parse(r.comparison)

    const md = renderMarkdownReport(r.comparison)
    expect(md).toContain(
      '| Capabilities vs baseline | a (pi 0.73.1) → b (opencode 1.18.33): +2 tools (&lt;img src=x onerror=alert(1)&gt;, @\u200docto-team), compaction on |',
    )
    expect(md).not.toContain(HOSTILE)
    const html = renderHtmlReport(r.comparison)
    expect(html).toContain('+2 tools (&lt;img src=x onerror=alert(1)&gt;, @octo-team), compaction on')
    expect(html).not.toContain(HOSTILE)
    // The Capabilities section: each cell's value with where it was read, and the tools seen.
    expect(html).toContain('<section><h2>Capabilities</h2>')
    expect(html).toContain(
      '<td>compaction</td><td>off<br><small>settings.json</small></td><td>on<br><small>settings.json</small></td>',
    )
    expect(html).toContain(
      '<td>tools the proxy saw</td><td>bash, read — 36 of 40 requests offered tools</td><td>&lt;img src=x onerror=alert(1)&gt;, @octo-team, bash, read — 36 of 40 requests offered tools</td>',
    )
  })

  it('forged, malformed, misplaced or absent capabilities.json files are located notes, never a crash or a guess', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const outside = path.join(mkdtempSync(path.join(tmpdir(), 'hw-cap-outside-')), 'capabilities.json')
    writeFileSync(outside, JSON.stringify(manifest('a', 'pi', '9.9.9', ['stolen'], true)))
    const artifacts = artifactsWithCapabilities(plan, (cell, instance) => {
      if (cell === 'b' && instance === 't-001') return '{ "schema_version": 1, '
      if (cell === 'b' && instance === 't-002')
        return JSON.stringify(
          { ...manifest('b', 'opencode', '1.18.33', ['bash'], true), schema_version: 2 },
          null,
          2,
        )
      if (cell === 'b' && instance === 't-003')
        return JSON.stringify(manifest('a', 'pi', '0.73.1', ['bash'], true))
      if (cell === 'a' && instance === 't-004') return null
      return JSON.stringify(manifest(cell, cell === 'a' ? 'pi' : 'opencode', '1', ['bash'], false))
    })
    // a's t-003 file is a symbolic link to a file outside the artifact
    const leg = plan.legs.find((l) => l.cell === 'a' && l.instances.includes('t-003'))
    const linked = path.join(artifacts, leg?.artifact ?? '', 'logs/t-003/0-1/capabilities.json')
    await import('node:fs/promises').then((fs) => fs.rm(linked))
    symlinkSync(outside, linked)

    const out = mkdtempSync(path.join(tmpdir(), 'hw-cap-agg-'))
    const r = await aggregate({ plan: writePlan(plan), artifacts, out, resamples: 200 })
    const caps = r.comparison.capabilities
    expect(caps?.cells.map((c) => [c.cell_id, c.attempts])).toEqual([
      ['a', 2],
      ['b', 1],
    ])
    const bLeg = plan.legs.find((l) => l.cell === 'b')?.artifact
    const aLeg = leg?.artifact
    expect(caps?.notes).toEqual([
      'cell a: 1 attempt(s) without capabilities.json (written by an earlier version, or lost): their capabilities are unknown',
      `ignored ${aLeg}/logs/t-003/0-1/capabilities.json is a symbolic link: not followed out of the folder`,
      expect.stringMatching(
        new RegExp(`^ignored ${bLeg}/logs/t-001/0-1/capabilities\\.json:1:24: not valid JSON: .+`),
      ),
      `ignored ${bLeg}/logs/t-002/0-1/capabilities.json:2:21: schema_version: Invalid input: expected 1 (got 2)`,
      `ignored ${bLeg}/logs/t-003/0-1/capabilities.json: cell_id names another cell than its attempt record (b)`,
    ])
    // No value of the forged files reached the summary.
    expect(JSON.stringify(caps?.cells)).not.toContain('stolen')
    expect(JSON.stringify(caps?.cells)).not.toContain('9.9.9')
    // The header shows the first notes and counts the rest.
    const md = renderMarkdownReport(r.comparison)
    expect(md).toContain('| Capability note | … 2 more in comparison.json capabilities.notes |')
  })

  it('artifacts without any capabilities.json (an earlier version) give no section and no header row', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const artifacts = artifactsWithCapabilities(plan, () => null)
    const out = mkdtempSync(path.join(tmpdir(), 'hw-cap-agg-'))
    const r = await aggregate({ plan: writePlan(plan), artifacts, out, resamples: 200 })
    expect(r.comparison.capabilities).toBeUndefined()
    expect(r.markdown).not.toContain('Capabilit')
  })

  it("the report after a previous run lists each cell's change since then; comparison.json keeps its own", async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    const run = async (version: string, tools: string[]) => {
      const artifacts = artifactsWithCapabilities(plan, (cell) =>
        JSON.stringify(
          cell === 'a'
            ? manifest('a', 'pi', '0.73.1', ['bash'], false)
            : manifest('b', 'opencode', version, tools, version !== '1.18.33'),
        ),
      )
      const out = mkdtempSync(path.join(tmpdir(), 'hw-cap-agg-'))
      return (await aggregate({ plan: writePlan(plan), artifacts, out, resamples: 200 })).comparison
    }
    const lastWeek = await run('1.18.33', ['bash', 'read'])
    const thisWeek = await run('1.19.0', ['bash', 'glob', 'grep', 'read', 'todowrite'])
    const shown = withPreviousCapabilities(thisWeek, lastWeek)
    expect(shown.capabilities?.since_previous).toEqual([
      'opencode 1.18.33 → 1.19.0 (cell b): +3 tools (glob, grep, todowrite), compaction on',
    ])
    expect(thisWeek.capabilities?.since_previous).toBeUndefined()
    expect(renderMarkdownReport(shown)).toContain(
      '| Capabilities since the previous run | opencode 1.18.33 → 1.19.0 (cell b): +3 tools (glob, grep, todowrite), compaction on |',
    )
    // `harness-watch diff` of the two comparisons states the same line.
    const d = diffComparisons(lastWeek, thisWeek)
    expect(d.capabilities).toEqual([
      'opencode 1.18.33 → 1.19.0 (cell b): +3 tools (glob, grep, todowrite), compaction on',
    ])
    expect(renderDiffMarkdown(d)).toContain(
      '> **Capabilities:** opencode 1.18.33 → 1.19.0 (cell b): +3 tools (glob, grep, todowrite), compaction on',
    )
    // A previous run without capabilities (an earlier version's artifacts): nothing is claimed.
    const { capabilities: _, ...older } = lastWeek
    expect(withPreviousCapabilities(thisWeek, older).capabilities?.since_previous).toBeUndefined()
  })
})
