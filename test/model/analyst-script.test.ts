import { describe, expect, it } from 'vitest'
import { ManifestSchema } from '../../src/manifest/schema.js'
import { analystNext } from '../../src/model/analyst-script.js'
import { cachingFor } from '../../src/model/faults.js'
import { decideAnalyst, isAnalystRequest } from '../../src/model/script.js'
import type { OfferedTool, ParsedRequest } from '../../src/model/types.js'
import { baseManifest } from '../support/manifests.js'

const tool = (name: string): OfferedTool => ({ name, description: '', schema: {}, kind: 'function' })
const DOSSIER_TOOLS = [
  'list_pairs',
  'view_timeline',
  'view_patch',
  'view_test_progress',
  'view_request_curve',
]
const req = (tools: string[], results: string[]): ParsedRequest => ({
  api: 'chat',
  stream: false,
  model: 'm',
  tools: tools.map(tool),
  toolResults: results.length,
  lastToolResult: results.at(-1) ?? null,
  toolResultTexts: results,
  lastToolError: false,
  userText: '',
  contextText: '',
  jsonSchema: null,
  segments: [],
})
const PAIRS = JSON.stringify([
  {
    id: 'a-vs-b',
    status: 'confirmed',
    baseline: 'a',
    treatment: 'b',
    instances: [{ instance: 't-1', baseline_attempts: ['a/t-1/0-1'], treatment_attempts: ['b/t-1/0-1'] }],
  },
])

describe('the scripted analyst replayed by the model', () => {
  it('is recognised by the dossier tools under any harness naming, and only then', () => {
    expect(
      isAnalystRequest(
        req(
          DOSSIER_TOOLS.map((t) => `bridge_${t}`),
          [],
        ),
      ),
    ).toBe(true)
    expect(
      isAnalystRequest(
        req(
          DOSSIER_TOOLS.map((t) => `mcp__bridge__${t}`),
          [],
        ),
      ),
    ).toBe(true)
    expect(isAnalystRequest(req(['bash', 'bridge_list_pairs'], []))).toBe(false)
    expect(isAnalystRequest(req(['bash', 'read'], []))).toBe(false)
  })

  it('calls list_pairs first, then the request curves of the first pair, under the offered names', () => {
    const tools = DOSSIER_TOOLS.map((t) => `bridge_${t}`)
    expect(decideAnalyst(req(tools, []))).toMatchObject({ kind: 'tool', tool: { name: 'bridge_list_pairs' } })
    expect(decideAnalyst(req(tools, [PAIRS]))).toMatchObject({
      kind: 'tool',
      tool: { name: 'bridge_view_request_curve' },
      args: { attempt: 'a/t-1/0-1' },
    })
  })

  it('a tool result that is not the dossier JSON ends in an answer saying so (the schema rejects it)', () => {
    const a = analystNext(['<html>not json</html>'])
    expect(a).toEqual({
      answer: { error: expect.stringMatching(/^the analyst could not read a tool result: /) },
    })
    const d = decideAnalyst(req(DOSSIER_TOOLS, ['Error: no attempt']))
    expect(d.kind).toBe('text')
  })

  it('a dossier with no pair on both sides answers without further calls', () => {
    expect(analystNext(['[]'])).toEqual({
      answer: { hypothesis: 'no driving instance has attempts on both sides' },
    })
  })
})

describe('caching injected per cell', () => {
  it('a cell override wins over the model setting; other cells and unattributed requests keep it', () => {
    const s = { caching: true, cells: { b: { caching: false } } }
    expect([cachingFor(s, 'b'), cachingFor(s, 'a'), cachingFor(s, undefined)]).toEqual([false, true, true])
    expect(cachingFor({ caching: false, cells: { b: { caching: true } } }, 'b')).toBe(true)
    expect(cachingFor({ caching: false, cells: {} }, 'b')).toBe(false)
  })
})

describe('model.scripted.cells names cells of the manifest', () => {
  it('an injected change for a cell that does not exist is refused, naming the field and the cells', () => {
    const m = baseManifest({
      model: {
        id: 'm',
        provider: 'scripted',
        api: 'chat',
        scripted: { cells: { nocahce: { caching: false } } },
      },
    })
    const r = ManifestSchema.safeParse(m)
    expect(r.success).toBe(false)
    const issue = r.error?.issues.find((i) => i.path.join('.') === 'model.scripted.cells.nocahce')
    expect(issue?.message).toMatch(/^no cell "nocahce" to inject a change into \(cells: /)
    const ok = ManifestSchema.safeParse(
      baseManifest({
        model: {
          id: 'm',
          provider: 'scripted',
          api: 'chat',
          scripted: { cells: { [(m.cells as { id: string }[])[0]!.id]: { repeat_reads: 2 } } },
        },
      }),
    )
    expect(ok.success).toBe(true)
  })
})
