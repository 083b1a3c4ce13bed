import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { ProposalFileSchema } from '../../src/diagnose/schema.js'
import { defaultCacheDir } from '../../src/harnesses/install.js'
import { piAdapter } from '../../src/harnesses/pi.js'
import { ManifestSchema } from '../../src/manifest/schema.js'
import { scriptedAnalyst } from '../../src/model/analyst-script.js'
import { analystCell, answerFromMessage, harnessAnalyst } from '../../src/pipeline/analyst-harness.js'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import { LedgerRowSchema } from '../../src/records/ledger.js'
import {
  diffOf,
  jsonl,
  makeRunDir,
  opencodeEvents,
  piEvents,
  rowsEvery,
  type Step,
} from '../diagnose/run-dir.js'
import { baseManifest } from '../support/manifests.js'

// One discordant block (t-2): the treatment (b, OpenCode) offers 9 tools per request where the
// baseline (a, Pi) offers 7. The analyst is real Pi 0.73.1 with only the dossier tools (read-only),
// on the scripted route through its own recording proxy.
async function dossierRun() {
  const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
  const find = (cell: string) => run.attempts.find((a) => a.cell_id === cell && a.instance_id === 't-2')!
  const steps: Step[] = [
    { s: 1, tool: 'read', args: { path: 'src/x.js' }, output: 'x' },
    { s: 2, tool: 'edit', args: { path: 'src/x.js' }, output: 'ok' },
  ]
  const a = find('a')
  const b = find('b')
  run.write(a, {
    trajectory: jsonl(piEvents(a, steps)),
    patch: diffOf('src/x.js'),
    ledger: rowsEvery(a, 3, 1),
  })
  run.write(b, {
    trajectory: jsonl(opencodeEvents(b, steps)),
    patch: diffOf('src/x.js'),
    ledger: rowsEvery(b, 4, 1, { tools: 9 }),
  })
  await run.aggregate()
  return run.dir
}

const manifest = (harness = 'pi') =>
  ManifestSchema.parse(
    baseManifest({
      model: { id: 'gpt-5-mini', provider: 'scripted', api: 'chat', prices: { input: 1, output: 2 } },
      cells: [
        { id: 'a', harness, version: '0.73.1' },
        { id: 'b', harness: 'opencode', version: '1.18.33' },
      ],
      baseline: 'a',
      budgets: { timeout_s: 120, max_requests: 20 },
      sandbox: { backend: 'auto', allow_unisolated: true },
    }),
  )

describe('the analyst runs through a harness (Pi) with the dossier tools over MCP', () => {
  let skip = ''
  beforeAll(async () => {
    try {
      await piAdapter.install('0.73.1', { cacheDir: defaultCacheDir(), log: () => {} })
    } catch (e) {
      skip = `Pi 0.73.1 cannot be installed here: ${(e as Error).message.split('\n')[0]}`
    }
  }, 600_000)

  it('answers grounded, with its requests and spend apart in proposal.json, its ledger and dossier.md', {
    timeout: 120_000,
  }, async (t) => {
    if (skip) return t.skip(skip)
    const dir = await dossierRun()
    const m = manifest()
    const analyst = harnessAnalyst({ manifest: m, diagnosisDir: path.join(dir, 'diagnosis'), runId: 'r1' })
    expect(analyst?.route).toBe('harness:pi')
    let r: Awaited<ReturnType<typeof diagnoseRun>>
    try {
      r = await diagnoseRun({ dir, analyst: analyst!, fallback: scriptedAnalyst })
    } finally {
      await analyst?.close()
    }
    const p = ProposalFileSchema.parse(
      JSON.parse(readFileSync(path.join(dir, 'diagnosis', 'proposal.json'), 'utf8')),
    )
    expect(p.grounding).toMatchObject({ status: 'grounded', attempts: 1, problems: [] })
    expect(p.analyst.fallback).toBeUndefined()
    expect(['namespace+uid', 'env-only']).toContain(p.analyst.isolation)
    expect(p.analyst).toMatchObject({
      route: 'harness:pi',
      harness: 'pi@0.73.1',
      ledger: 'analyst/ledger.jsonl',
    })
    expect(p.answer?.category).toBe('tool_schema')
    expect(p.answer?.hypothesis).toContain('b offers 9 tool schemas per request where a offers 7')
    // Five dossier tool calls and the answer: six proxy requests, priced on the route.
    const rows = readFileSync(path.join(dir, 'diagnosis', 'analyst', 'ledger.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => LedgerRowSchema.parse(JSON.parse(l)))
    expect(rows.length).toBe(6)
    expect(p.analyst.requests).toBe(6)
    expect(rows.every((x) => x.attribution?.role === 'analyst' && x.attribution.cell_id === 'analyst')).toBe(
      true,
    )
    const spend = rows.reduce((s, x) => s + (x.spend_usd ?? 0), 0)
    expect(p.analyst.spend_usd).toBeCloseTo(spend, 9)
    expect(p.analyst.spend_usd).toBeGreaterThan(0)
    // Read-only: the model was offered the five dossier tools and nothing else.
    expect(rows[0]?.request_shape?.tools).toBe(5)
    // The comparison's ledgers do not hold the analyst's rows.
    expect(JSON.stringify(r.dossier)).not.toContain('"analyst"')
    const md = readFileSync(r.dossierMd, 'utf8')
    expect(md).toContain('## Analyst')
    expect(md).toContain('harness `pi@0.73.1`')
    expect(md).toContain(`6 proxy request(s), $${p.analyst.spend_usd}`)
    // Its stdout and stderr stay for audit; its workspace and home do not.
    expect(readdirSync(path.join(dir, 'diagnosis', 'analyst')).sort()).toEqual([
      'ledger.jsonl',
      'try-1.stderr.txt',
      'try-1.stdout.txt',
    ])
  })

  it('a run folder named relative to the current folder (diagnose out/demo --analyst harness) still answers', {
    timeout: 120_000,
  }, async (t) => {
    if (skip) return t.skip(skip)
    const dir = path.relative(process.cwd(), await dossierRun())
    expect(path.isAbsolute(dir)).toBe(false)
    const analyst = harnessAnalyst({
      manifest: manifest(),
      diagnosisDir: path.join(dir, 'diagnosis'),
      runId: 'r1',
    })
    try {
      await diagnoseRun({ dir, analyst: analyst!, fallback: scriptedAnalyst })
    } finally {
      await analyst?.close()
    }
    const p = ProposalFileSchema.parse(
      JSON.parse(readFileSync(path.join(dir, 'diagnosis', 'proposal.json'), 'utf8')),
    )
    // Before: "a sandbox path must be absolute" on both tries, and the scripted fallback answered.
    expect(p.analyst.fallback).toBeUndefined()
    expect(p.analyst.route).toBe('harness:pi')
    expect(p.grounding).toMatchObject({ status: 'grounded', attempts: 1 })
  })

  it('a harness that cannot run falls back to the in-process analyst, and proposal.json says why', {
    timeout: 60_000,
  }, async () => {
    const dir = await dossierRun()
    const m = manifest()
    m.cells[0]!.version = '0.0.0-does-not-exist'
    const analyst = harnessAnalyst({ manifest: m, diagnosisDir: path.join(dir, 'diagnosis'), runId: 'r1' })
    try {
      await diagnoseRun({ dir, analyst: analyst!, fallback: scriptedAnalyst })
    } finally {
      await analyst?.close()
    }
    const p = ProposalFileSchema.parse(
      JSON.parse(readFileSync(path.join(dir, 'diagnosis', 'proposal.json'), 'utf8')),
    )
    expect(p.grounding.status).toBe('grounded')
    expect(p.analyst.route).toBe('scripted')
    expect(p.analyst.fallback).toMatch(/^harness:pi gave no answer \(try 1: the analyst failed: .*try 2: /)
  })
})

describe('harness analyst glue', () => {
  it('picks the baseline cell when its harness can run read-only, else another, else none', () => {
    expect(analystCell(manifest())?.id).toBe('a')
    expect(analystCell({ ...manifest(), baseline: 'b' })?.id).toBe('a')
    const none = manifest('opencode')
    expect(analystCell(none)).toBeNull()
    expect(harnessAnalyst({ manifest: none, diagnosisDir: '/nonexistent', runId: 'r' })).toBeNull()
  })

  it('reads the JSON answer from a bare, fenced or surrounded final message; refuses prose', () => {
    expect(answerFromMessage('{"a":1}')).toEqual({ a: 1 })
    expect(answerFromMessage('Here:\n```json\n{"a":2}\n```\n')).toEqual({ a: 2 })
    expect(answerFromMessage('The answer is {"a":3}. Done')).toEqual({ a: 3 })
    expect(() => answerFromMessage('no json here')).toThrow(/not a JSON object: "no json here"/)
  })
})
