import { lstat, mkdir, readlink } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  COPILOT_SHARED_CACHE,
  copilotAdapter,
  copilotBinary,
  copilotProviderEnv,
  parseCopilotOutput,
  readCopilotSessionEvents,
} from '../../src/harnesses/copilot.js'
import { parseJsonLines } from '../../src/harnesses/jsonl.js'
import { fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

describe('copilot adapter', () => {
  const dirs = useAttemptDirs()

  it('runs BYOK offline with the provider in the environment and links the shared unpack cache', async () => {
    const root = path.join(dirs.base, 'install')
    await mkdir(path.join(root, COPILOT_SHARED_CACHE, 'copilot', 'pkg'), { recursive: true })
    const installed = { harness: 'copilot' as const, version: '1.0.102', bin: '/cache/cp/copilot', root }
    const ctx = makeCtx(dirs, { model: 'gpt-5' })
    const inv = await copilotAdapter.prepare(installed, ctx)
    expect(inv.args).toEqual([
      '--allow-all',
      '--output-format',
      'json',
      '--model',
      'gpt-5',
      '-C',
      dirs.workspace,
      '--disable-client-telemetry',
      '--no-auto-update',
      '-p',
      ctx.prompt,
    ])
    expect(inv.env).toMatchObject({
      COPILOT_HOME: path.join(dirs.home, '.copilot'),
      COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:4555/v1',
      COPILOT_PROVIDER_TYPE: 'openai',
      COPILOT_PROVIDER_API_KEY: 'sk-hw-attempt-1',
      COPILOT_MODEL: 'gpt-5',
      COPILOT_OFFLINE: 'true',
      COPILOT_AUTO_UPDATE: 'false',
    })
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys(
        'COPILOT_HOME',
        'COPILOT_PROVIDER_BASE_URL',
        'COPILOT_PROVIDER_TYPE',
        'COPILOT_PROVIDER_API_KEY',
        'COPILOT_MODEL',
        'COPILOT_OFFLINE',
        'COPILOT_AUTO_UPDATE',
      ),
    )
    expect(leaks(inv.env)).toEqual([])
    const link = path.join(dirs.home, '.cache', 'copilot', 'pkg')
    expect((await lstat(link)).isSymbolicLink()).toBe(true)
    expect(await readlink(link)).toBe(path.join(root, COPILOT_SHARED_CACHE, 'copilot', 'pkg'))
  })

  it('uses the anthropic provider type at the bare origin, and the Responses wire API on request', () => {
    const base = { endpoint: { origin: 'http://h:1', apiKey: 'k' }, model: 'm' }
    expect(copilotProviderEnv({ ...base, api: 'anthropic' })).toEqual({
      COPILOT_PROVIDER_BASE_URL: 'http://h:1',
      COPILOT_PROVIDER_TYPE: 'anthropic',
      COPILOT_PROVIDER_API_KEY: 'k',
      COPILOT_MODEL: 'm',
    })
    expect(copilotProviderEnv({ ...base, api: 'responses' })).toMatchObject({
      COPILOT_PROVIDER_BASE_URL: 'http://h:1/v1',
      COPILOT_PROVIDER_WIRE_API: 'responses',
    })
    expect(copilotBinary('/r', { platform: 'linux', arch: 'x64', musl: false, avx2: true })).toBe(
      '/r/node_modules/@github/copilot-linux-x64/copilot',
    )
  })

  it('takes tokens from the session events (stdout has none) and the answer from stdout', async () => {
    const session = parseJsonLines(await fixture('copilot', 'session-events.jsonl')).events
    const parsed = parseCopilotOutput(rawRun(await fixture('copilot', 'success.jsonl')), session)
    expect(parsed.finalMessage).toBe('done')
    expect(parsed.selfReport).toEqual({
      input_tokens: 24104,
      output_tokens: 34,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: null,
      requests: 2,
      turns: null,
    })
    expect(parsed.startupError).toBeNull()
  })

  it('falls back to session.shutdown model metrics when no usage record was written', async () => {
    const session = parseJsonLines(await fixture('copilot', 'session-events.jsonl')).events.filter(
      (e) => e.type !== 'session.usage_record',
    )
    const parsed = parseCopilotOutput(rawRun(await fixture('copilot', 'success.jsonl')), session)
    expect(parsed.selfReport).toMatchObject({ input_tokens: 24104, output_tokens: 34, requests: 2 })
  })

  it('reads session-state/*/events.jsonl from the attempt home', async () => {
    const dir = path.join(dirs.home, '.copilot', 'session-state', 'abc')
    await mkdir(dir, { recursive: true })
    const { writeFile } = await import('node:fs/promises')
    await writeFile(
      path.join(dir, 'events.jsonl'),
      '{"type":"session.start"}\nnot json\n{"type":"session.shutdown"}\n',
    )
    expect((await readCopilotSessionEvents(dirs.home)).map((e) => e.type)).toEqual([
      'session.start',
      'session.shutdown',
    ])
    expect(await readCopilotSessionEvents(path.join(dirs.base, 'none'))).toEqual([])
  })

  it('an unreachable provider is a startup error with its session.error message', async () => {
    const parsed = parseCopilotOutput(
      rawRun(await fixture('copilot', 'no-server.jsonl'), { exitCode: 1 }),
      [],
    )
    expect(parsed.selfReport).toBeNull()
    expect(parsed.startupError).toMatch(/^exit 1: .*127\.0\.0\.1/)
  })
})
