import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runAnalyst } from '../../src/diagnose/analyst.js'
import { checkAnswer } from '../../src/diagnose/grounding.js'
import { type ProposalAnswer, ProposalFileSchema } from '../../src/diagnose/schema.js'
import type { AnalystPort } from '../../src/dialogue/analyst-port.js'
import { scriptedAnalyst } from '../../src/model/analyst-script.js'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import { diffOf, jsonl, makeRunDir, opencodeEvents, piEvents, rowsEvery, type Step } from './run-dir.js'

// One discordant block (t-2): the treatment (b, OpenCode) offers 9 tools per request where the
// baseline (a, Pi) offers 7.
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
  const r = await diagnoseRun({ dir: run.dir })
  return { ...r, dir: path.join(run.dir, 'diagnosis') }
}

const good = (over: Partial<ProposalAnswer> = {}): ProposalAnswer => ({
  hypothesis: 'b offers 9 tools per request where a offers 7.',
  alternative_hypotheses: [],
  category: 'tool_schema',
  supporting_evidence: [
    { instance: 't-2', cell: 'b', event_ids: ['b/t-2/0-1#0'], claim: 'requests carry 9 tools' },
  ],
  counterevidence: [],
  estimated_impact: 'the fresh input of every request',
  affected_instances: ['t-2'],
  predicted_observable_change: 'tools per request fall from 9 to 7',
  single_variable_experiment: {
    variable: 'tools offered',
    current_value: '9 tools',
    proposed_value: '7 tools',
    manifest_patch: 'cells:\n  - id: b-candidate\n    harness: opencode\n',
    metric: 'input_fresh_tokens',
    expected_direction: 'decrease',
  },
  ...over,
})

/** An analyst that reads the request curve (so 9 and 7 are in a tool output), then gives `answers` in turn. */
function portOf(answers: unknown[]): AnalystPort & { feedback: string[][] } {
  const seen: string[][] = []
  let i = 0
  return {
    route: 'test',
    feedback: seen,
    async answer(s) {
      seen.push(s.feedback)
      await s.callTool('view_request_curve', { attempt: 'a/t-2/0-1' })
      await s.callTool('view_request_curve', { attempt: 'b/t-2/0-1' })
      return { answer: answers[i++], requests: 2, spend_usd: 0.004 }
    },
  }
}

describe('analyst answers are validated, grounded, retried once, else published ungrounded', () => {
  it('a grounded answer on the first try is kept, with the analyst spend reported apart', async () => {
    const { dossier, dir } = await dossierRun()
    const port = portOf([good()])
    const p = await runAnalyst({ dossier, dir, report: '', port })
    expect(p.grounding).toEqual({ status: 'grounded', attempts: 1, problems: [] })
    expect(p.answer?.hypothesis).toContain('9 tools')
    expect(p.analyst).toEqual({ route: 'test', requests: 2, spend_usd: 0.004 })
    expect(
      ProposalFileSchema.parse(JSON.parse(readFileSync(path.join(dir, 'proposal.json'), 'utf8'))),
    ).toEqual(p)
  })

  it('schema rejection: a missing field is named, the retry gets the problem, and a valid retry passes', async () => {
    const { dossier, dir } = await dossierRun()
    const { category: _drop, ...noCategory } = good()
    const port = portOf([noCategory, good()])
    const p = await runAnalyst({ dossier, dir, report: '', port })
    expect(p.grounding.status).toBe('grounded')
    expect(p.grounding.attempts).toBe(2)
    expect(p.grounding.problems).toEqual([expect.stringMatching(/^try 1: schema: category: /)])
    expect(port.feedback[1]).toEqual(p.grounding.problems)
  })

  it('grounding rejection: a non-existent event id and a number that appears nowhere; two failures → ungrounded, no claims', async () => {
    const { dossier, dir } = await dossierRun()
    const badId = good({
      supporting_evidence: [
        { instance: 't-2', cell: 'b', event_ids: ['b/t-2/0-1#99'], claim: 'requests carry 9 tools' },
      ],
    })
    const badNumber = good({ hypothesis: 'b offers 9 tools per request and costs 37.5% more.' })
    const p = await runAnalyst({ dossier, dir, report: '', port: portOf([badId, badNumber]) })
    expect(p.grounding.status).toBe('ungrounded')
    expect(p.answer).toBeNull()
    expect(p.grounding.problems).toEqual([
      'try 1: supporting_evidence[0] cites event "b/t-2/0-1#99", which does not exist',
      'try 2: the number 37.5 appears in no report or tool output',
    ])
    const file = JSON.parse(readFileSync(path.join(dir, 'proposal.json'), 'utf8'))
    expect(file.answer).toBeNull()
    expect(file.grounding.status).toBe('ungrounded')
  })

  it('a number from the report grounds the answer; an analyst that throws is a rejected try', async () => {
    const { dossier, dir } = await dossierRun()
    const withReport = good({ estimated_impact: 'spend ratio 1.62 in the report' })
    const thrower: AnalystPort = {
      route: 'test',
      async answer() {
        throw new Error('model unreachable')
      },
    }
    expect(
      (await runAnalyst({ dossier, dir, report: '| spend | 1.62× |', port: portOf([withReport]) })).grounding
        .status,
    ).toBe('grounded')
    const p = await runAnalyst({ dossier, dir, report: '', port: thrower })
    expect(p.grounding).toMatchObject({ status: 'ungrounded', attempts: 2 })
    expect(p.grounding.problems[0]).toBe('try 1: the analyst failed: model unreachable')
    expect(p.analyst.requests).toBe(0)
  })

  it('the scripted analyst reads the tools over MCP and names the extra tool schema, grounded', async () => {
    const { dossier, dir } = await dossierRun()
    const p = await runAnalyst({ dossier, dir, report: '', port: scriptedAnalyst })
    expect(p.grounding.status).toBe('grounded')
    expect(p.answer).toMatchObject({
      category: 'tool_schema',
      // the discordant block first, then the residual block that also has both attempts
      affected_instances: ['t-2', 't-1'],
      single_variable_experiment: { current_value: '9 tools', expected_direction: 'decrease' },
    })
    expect(p.answer!.hypothesis).toBe(
      'b offers 9 tool schemas per request where a offers 7; every request carries the extra schema bytes.',
    )
  })
})

describe('grounding check (pure)', () => {
  const ctx = {
    eventIds: new Set(['c/i/0-1#0']),
    instances: new Set(['i']),
    cells: new Set(['c']),
    sources: ['{"share":0.8123,"n":1234}'],
  }
  const answer = (hypothesis: string) =>
    good({
      hypothesis,
      supporting_evidence: [{ instance: 'i', cell: 'c', event_ids: ['c/i/0-1#0'], claim: 'x' }],
      affected_instances: ['i'],
      predicted_observable_change: 'fewer tools',
      single_variable_experiment: {
        ...good().single_variable_experiment,
        current_value: 'a',
        proposed_value: 'b',
      },
    })
  it.each([
    ['a share of 0.81', true],
    ['a share of 81%', true],
    ['1,234 requests', true],
    ['a share of 0.9', false],
    ['model gpt-5 on t-3 and b/t-3/0-1#4', true],
  ])('%s → grounded %s', (text, ok) => {
    expect(checkAnswer(answer(text), ctx).ok).toBe(ok)
  })
  it('an unknown instance, cell and extra key are all refused', () => {
    const r = checkAnswer({ ...answer('x'), extra: 1 }, ctx)
    expect(r.ok).toBe(false)
    const r2 = checkAnswer(good(), ctx)
    expect(r2.ok ? [] : r2.problems).toEqual(
      expect.arrayContaining([
        'supporting_evidence[0].instance "t-2" is not in the dossier',
        'supporting_evidence[0].cell "b" is not in the dossier',
        'affected_instances: "t-2" is not in the dossier',
      ]),
    )
  })
})

describe('report.md links and quotes the diagnosis', () => {
  it('the dossier link, the hypothesis and the proposed experiment; a later diagnosis replaces the section', async () => {
    const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    const find = (cell: string) => run.attempts.find((a) => a.cell_id === cell && a.instance_id === 't-2')!
    const steps: Step[] = [{ s: 1, tool: 'read', args: { path: 'src/x.js' }, output: 'x' }]
    for (const [cell, tools, events] of [
      ['a', 7, piEvents],
      ['b', 9, opencodeEvents],
    ] as const) {
      const at = find(cell)
      run.write(at, {
        trajectory: jsonl(events(at, steps)),
        patch: diffOf('src/x.js'),
        ledger: rowsEvery(at, 3, 1, { tools }),
      })
    }
    await run.aggregate()
    const port = portOf([good()])
    await diagnoseRun({ dir: run.dir, analyst: port })
    await diagnoseRun({ dir: run.dir, analyst: portOf([good()]) })
    const md = readFileSync(path.join(run.dir, 'report.md'), 'utf8')
    expect(md.split('## Diagnosis')).toHaveLength(2)
    expect(md).toContain('Dossier: [diagnosis/dossier.md](diagnosis/dossier.md)')
    expect(md).toContain('b offers 9 tools per request where a offers 7.')
    expect(md).toMatch(/\*\*Proposed experiment\*\* \(one variable: tools offered, 9 tools → 7 tools/)
  })

  it('a report asked for with a missing diagnosis says so; nothing else changes', async () => {
    const { writeReportDiagnosis } = await import('../../src/pipeline/diagnose.js')
    const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
    await run.aggregate()
    const before = readFileSync(path.join(run.dir, 'report.md'), 'utf8')
    await writeReportDiagnosis(run.dir, null, 'the dossier could not be written (disk full)')
    const after = readFileSync(path.join(run.dir, 'report.md'), 'utf8')
    expect(after.startsWith(before.trimEnd())).toBe(true)
    expect(after.slice(before.trimEnd().length)).toContain(
      '**No diagnosis is available for this run**: the dossier could not be written (disk full).',
    )
  })
})
