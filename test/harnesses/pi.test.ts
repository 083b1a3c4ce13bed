import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parsePiOutput, piAdapter, piEndpoint } from '../../src/harnesses/pi.js'
import { fakeInstalled, fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

describe('pi adapter', () => {
  const dirs = useAttemptDirs()

  it('renders models.json/settings.json at the endpoint and runs headless in JSON mode', async () => {
    const ctx = makeCtx(dirs, {
      model: 'gpt-5',
      config: { args: ['--thinking', 'off'], env: {}, pass_env: [], files: {} },
    })
    const inv = await piAdapter.prepare(fakeInstalled('pi', '/cache/pi/dist/cli.js'), ctx)
    const agentDir = path.join(dirs.home, '.pi', 'agent')
    const models = JSON.parse(await readFile(path.join(agentDir, 'models.json'), 'utf8'))
    expect(models.providers.hw).toMatchObject({
      baseUrl: 'http://127.0.0.1:4555/v1',
      api: 'openai-completions',
      apiKey: 'sk-hw-attempt-1',
      compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
    })
    expect(models.providers.hw.models[0]).toMatchObject({ id: 'gpt-5', cost: { input: 0, output: 0 } })
    const settings = JSON.parse(await readFile(path.join(agentDir, 'settings.json'), 'utf8'))
    expect(settings).toEqual({
      defaultProvider: 'hw',
      defaultModel: 'gpt-5',
      quietStartup: true,
      enableInstallTelemetry: false,
      retry: { enabled: false },
    })
    expect(inv.command).toBe(process.execPath)
    expect(inv.args).toEqual([
      '/cache/pi/dist/cli.js',
      '-p',
      '--mode',
      'json',
      '--offline',
      '--provider',
      'hw',
      '--model',
      'gpt-5',
      '--thinking',
      'off',
      ctx.prompt,
    ])
    expect(inv.stdin).toBeUndefined()
    expect(inv.cwd).toBe(dirs.workspace)
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys('PI_CODING_AGENT_DIR', 'PI_OFFLINE', 'PI_SKIP_VERSION_CHECK', 'PI_TELEMETRY'),
    )
    expect(inv.env).toMatchObject({
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: '1',
      PI_TELEMETRY: '0',
      HOME: dirs.home,
    })
    expect(leaks(inv.env)).toEqual([])
  })

  it('maps every wire API to its verified base URL suffix', () => {
    expect(piEndpoint('chat', 'http://h:1')).toEqual({ api: 'openai-completions', baseUrl: 'http://h:1/v1' })
    expect(piEndpoint('responses', 'http://h:1')).toEqual({
      api: 'openai-responses',
      baseUrl: 'http://h:1/v1',
    })
    expect(piEndpoint('anthropic', 'http://h:1/')).toEqual({
      api: 'anthropic-messages',
      baseUrl: 'http://h:1',
    })
    expect(piEndpoint('gemini', 'http://h:1')).toEqual({
      api: 'google-generative-ai',
      baseUrl: 'http://h:1/v1beta',
    })
  })

  it('puts declared prices into models.json and then reports its cost', async () => {
    const ctx = makeCtx(dirs, { prices: { input: 3, output: 15, cache_read: null, cache_write: 3.75 } })
    await piAdapter.prepare(fakeInstalled('pi', '/cache/pi/dist/cli.js'), ctx)
    const models = JSON.parse(await readFile(path.join(dirs.home, '.pi/agent/models.json'), 'utf8'))
    expect(models.providers.hw.models[0].cost).toEqual({
      input: 3,
      output: 15,
      cacheRead: 3,
      cacheWrite: 3.75,
    })
  })

  it('parses a real run: final answer, two requests, usage summed over assistant messages', async () => {
    const parsed = parsePiOutput(rawRun(await fixture('pi', 'success.jsonl')), false)
    expect(parsed.finalMessage).toBe('done')
    expect(parsed.selfReport).toEqual({
      input_tokens: 2944,
      output_tokens: 21,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_usd: null,
      requests: 2,
      turns: 2,
    })
    expect(parsed.startupError).toBeNull()
    expect(parsed.trajectory.length).toBeGreaterThan(5)
  })

  it('reports a failed first request as a startup error even though Pi exits 0', async () => {
    const parsed = parsePiOutput(rawRun(await fixture('pi', 'no-server.jsonl'), { exitCode: 0 }), false)
    expect(parsed.startupError).toBe('exit 0: Connection error.')
    expect(parsed.finalMessage).toBeNull()
  })
})
