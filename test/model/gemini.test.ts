import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ScriptedModel, startScriptedModel } from '../../src/model/server.js'
import { GREETING_INSTRUCTION, writePanel } from './fixtures.js'

// Gemini REST shapes (ai.google.dev/api/generate-content): POST /v1beta/models/{model}:generateContent,
// :streamGenerateContent (?alt=sse → server-sent events; without → one JSON array), :countTokens.
const SYSTEM = `You are Gemini CLI. ${'Keep edits minimal and verified. '.repeat(220)}`
const tools = [
  {
    functionDeclarations: [
      {
        name: 'run_shell_command',
        description: 'Runs a shell command',
        parametersJsonSchema: {
          type: 'object',
          properties: { command: { type: 'string' }, description: { type: 'string' } },
          required: ['command'],
        },
      },
      {
        name: 'read_file',
        description: 'Reads a file',
        parametersJsonSchema: {
          type: 'object',
          properties: { absolute_path: { type: 'string' } },
          required: ['absolute_path'],
        },
      },
    ],
  },
]

interface Candidate {
  content: {
    role: string
    parts: { text?: string; functionCall?: { name: string; args: Record<string, unknown> } }[]
  }
  finishReason?: string
}
interface GenerateResponse {
  candidates: Candidate[]
  usageMetadata?: {
    promptTokenCount: number
    candidatesTokenCount: number
    totalTokenCount: number
    cachedContentTokenCount?: number
  }
  modelVersion: string
}

let model: ScriptedModel
const url = (m: string, method: string, query = '') => `${model.origin}/v1beta/models/${m}:${method}${query}`
const post = (u: string, body: unknown) =>
  fetch(u, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' },
    body: JSON.stringify(body),
  })

beforeAll(async () => {
  model = await startScriptedModel({ panelDirs: [writePanel()], config: { success_rate: 1 } })
})
afterAll(() => model.close())

function contents(toolResults: number): unknown[] {
  const out: unknown[] = [
    { role: 'user', parts: [{ text: `<session_context>Working directory: /w/g1</session_context>` }] },
    { role: 'user', parts: [{ text: GREETING_INSTRUCTION }] },
  ]
  for (let i = 0; i < toolResults; i++) {
    out.push({ role: 'model', parts: [{ functionCall: { name: 'run_shell_command', args: {} } }] })
    out.push({
      role: 'user',
      parts: [{ functionResponse: { name: 'run_shell_command', response: { output: 'ok' } } }],
    })
  }
  return out
}

describe('Gemini generateContent over plain fetch', () => {
  it('generateContent: a functionCall reading the file by absolute path; promptTokenCount = countTokens', async () => {
    const body = { systemInstruction: { parts: [{ text: SYSTEM }] }, contents: contents(0), tools }
    const res = await post(url('gemini-2.5-pro', 'generateContent'), body)
    expect(res.status).toBe(200)
    const r = (await res.json()) as GenerateResponse
    expect(r.candidates[0]!.content.parts[0]!.functionCall).toEqual({
      name: 'read_file',
      args: { absolute_path: '/w/g1/greet.sh' },
    })
    expect(r.modelVersion).toBe('gemini-2.5-pro')
    const count = (await (await post(url('gemini-2.5-pro', 'countTokens'), body)).json()) as {
      totalTokens: number
    }
    expect(r.usageMetadata!.promptTokenCount).toBe(count.totalTokens)
    expect(r.usageMetadata!.cachedContentTokenCount).toBeUndefined()
    // countTokens also accepts the wrapped form
    const wrapped = (await (
      await post(url('gemini-2.5-pro', 'countTokens'), {
        generateContentRequest: { model: 'models/x', ...body },
      })
    ).json()) as { totalTokens: number }
    expect(wrapped.totalTokens).toBe(count.totalTokens)
  })

  it('streamGenerateContent?alt=sse: data frames; promptTokenCount includes cachedContentTokenCount', async () => {
    const first = { systemInstruction: { parts: [{ text: SYSTEM }] }, contents: contents(1), tools }
    const r1 = (await (
      await post(url('gemini-2.5-pro', 'generateContent'), first)
    ).json()) as GenerateResponse
    const second = { ...first, contents: contents(2) }
    const res = await post(url('gemini-2.5-pro', 'streamGenerateContent', '?alt=sse'), second)
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const text = await res.text()
    const frames = text
      .split('\r\n\r\n')
      .filter((f) => f.startsWith('data: '))
      .map((f) => JSON.parse(f.slice(6)) as GenerateResponse)
    expect(frames).toHaveLength(1)
    const call = frames[0]!.candidates[0]!.content.parts[0]!.functionCall
    expect(call).toEqual({ name: 'run_shell_command', args: { command: 'sh check.sh' } })
    const u = frames[0]!.usageMetadata!
    expect(u.cachedContentTokenCount).toBe(r1.usageMetadata!.promptTokenCount)
    expect(u.promptTokenCount).toBeGreaterThan(u.cachedContentTokenCount!)
    expect(u.totalTokenCount).toBe(u.promptTokenCount + u.candidatesTokenCount)
  })

  it('streamGenerateContent without alt=sse: one JSON array of chunks; text split over several', async () => {
    const res = await post(url('gemini-2.5-flash', 'streamGenerateContent'), { contents: contents(3), tools })
    expect(res.headers.get('content-type')).toBe('application/json')
    const chunks = (await res.json()) as GenerateResponse[]
    expect(chunks.length).toBeGreaterThan(1)
    const text = chunks.map((c) => c.candidates[0]!.content.parts[0]!.text).join('')
    expect(text).toBe('Done: I applied the fix and ran `sh check.sh`.')
    expect(chunks.at(-1)!.candidates[0]!.finishReason).toBe('STOP')
    expect(chunks.at(-1)!.usageMetadata!.candidatesTokenCount).toBeGreaterThan(5)
  })

  it('responseMimeType application/json with a schema: a JSON object as text', async () => {
    const res = await post(url('gemini-2.5-flash', 'generateContent'), {
      contents: [{ role: 'user', parts: [{ text: 'Classify' }] }],
      generationConfig: {
        responseMimeType: 'application/json',
        responseSchema: {
          type: 'OBJECT',
          properties: {
            reasoning: { type: 'STRING' },
            next_speaker: { type: 'STRING', enum: ['user', 'model'] },
          },
        },
      },
    })
    const r = (await res.json()) as GenerateResponse
    expect(JSON.parse(r.candidates[0]!.content.parts[0]!.text!)).toEqual({
      reasoning: 'text',
      next_speaker: 'user',
    })
  })

  it('GET models lists Gemini-shaped entries; unknown routes are 404 in a provider shape', async () => {
    const list = (await (await fetch(`${model.origin}/v1beta/models`)).json()) as {
      models: { name: string }[]
    }
    expect(list.models.map((m) => m.name)).toContain('models/gemini-2.5-pro')
    const one = (await (await fetch(`${model.origin}/v1beta/models/gemini-2.5-pro`)).json()) as {
      name: string
    }
    expect(one.name).toBe('models/gemini-2.5-pro')
    const nf = await post(`${model.origin}/v1/embeddings`, {})
    expect(nf.status).toBe(404)
    expect(((await nf.json()) as { error: { message: string } }).error.message).toContain('/v1/embeddings')
  })
})
