import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import {
  openhandsAdapter,
  openhandsGeneration,
  openhandsTrajectoryPath,
  parseOpenhandsCli,
  parseOpenhandsLegacy,
  splitOpenhandsJsonEvents,
} from '../../src/harnesses/openhands.js'
import { fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

const cli = { harness: 'openhands' as const, version: '1.15.0', bin: '/c/venv/bin/openhands', root: '/c' }
const legacy = { harness: 'openhands' as const, version: '0.59.0', bin: '/c/venv/bin/python', root: '/c' }

describe('openhands adapter', () => {
  const dirs = useAttemptDirs()

  it('tells the CLI generation from the 0.x one by the pinned version', () => {
    expect(openhandsGeneration('1.15.0')).toBe('cli')
    expect(openhandsGeneration('0.59.0')).toBe('legacy')
  })

  it('CLI ≥ 1: headless JSON mode with the LLM from the environment (applied only with --override-with-envs)', async () => {
    const ctx = makeCtx(dirs, { model: 'claude-sonnet-4-5', api: 'anthropic' })
    const inv = await openhandsAdapter.prepare(cli, ctx)
    expect(inv.command).toBe('/c/venv/bin/openhands')
    expect(inv.args).toEqual(['--headless', '--json', '--override-with-envs', '-t', ctx.prompt])
    expect(inv.env).toMatchObject({
      LLM_MODEL: 'anthropic/claude-sonnet-4-5',
      LLM_BASE_URL: 'http://127.0.0.1:4555',
      LLM_API_KEY: 'sk-hw-attempt-1',
      LITELLM_LOCAL_MODEL_COST_MAP: 'True',
    })
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys('LLM_MODEL', 'LLM_BASE_URL', 'LLM_API_KEY', 'LITELLM_LOCAL_MODEL_COST_MAP'),
    )
    expect(inv.cwd).toBe(dirs.workspace)
    expect(leaks(inv.env)).toEqual([])
  })

  it('0.x: config.toml with the local cli runtime on the workspace and a saved trajectory', async () => {
    const ctx = makeCtx(dirs, { model: 'gpt-5' })
    const inv = await openhandsAdapter.prepare(legacy, ctx)
    const file = path.join(dirs.home, '.openhands', 'config.toml')
    expect(parseToml(await readFile(file, 'utf8'))).toEqual({
      core: {
        runtime: 'cli',
        workspace_base: dirs.workspace,
        file_store: 'local',
        file_store_path: path.join(dirs.home, '.openhands', 'file_store'),
        cache_dir: path.join(dirs.tmp, 'openhands-cache'),
        save_trajectory_path: openhandsTrajectoryPath(ctx),
      },
      llm: { model: 'openai/gpt-5', base_url: 'http://127.0.0.1:4555/v1', api_key: 'sk-hw-attempt-1' },
    })
    expect(inv.command).toBe('/c/venv/bin/python')
    expect(inv.args).toEqual(['-m', 'openhands.core.main', '--config-file', file, '-t', ctx.prompt])
    expect(inv.env.RUNTIME).toBe('cli')
  })

  it('splits --JSON Event-- blocks out of log text', async () => {
    const events = splitOpenhandsJsonEvents(await fixture('openhands', 'headless-json.txt'))
    expect(events.map((e) => e.kind)).toEqual([
      'MessageEvent',
      'ActionEvent',
      'ObservationEvent',
      'ActionEvent',
    ])
  })

  it('CLI ≥ 1: answer from FinishAction, usage from base_state.json', async () => {
    const state = JSON.parse(await fixture('openhands', 'base_state.json'))
    const parsed = parseOpenhandsCli(rawRun(await fixture('openhands', 'headless-json.txt')), [state])
    expect(parsed.finalMessage).toBe('Created hello.txt containing hello.')
    expect(parsed.selfReport).toEqual({
      input_tokens: 14210,
      output_tokens: 48,
      cache_read_tokens: 6900,
      cache_write_tokens: 0,
      cost_usd: null,
      requests: 2,
      turns: null,
    })
    expect(parsed.startupError).toBeNull()
  })

  it('0.x: answer from the finish action, cumulative llm_metrics of the last event', async () => {
    const events = JSON.parse(await fixture('openhands', 'legacy-trajectory.json'))
    const parsed = parseOpenhandsLegacy(rawRun(''), events)
    expect(parsed.finalMessage).toBe('hello.txt now contains hello.')
    expect(parsed.selfReport).toEqual({
      input_tokens: 12300,
      output_tokens: 41,
      cache_read_tokens: 5900,
      cache_write_tokens: 0,
      cost_usd: null,
      requests: 2,
      turns: null,
    })
  })

  it('parse reads the saved trajectory when there is one, else the conversation state', async () => {
    const ctx = makeCtx(dirs)
    const { mkdir, writeFile } = await import('node:fs/promises')
    const conv = path.join(dirs.home, '.openhands', 'conversations', 'c1')
    await mkdir(conv, { recursive: true })
    await writeFile(path.join(conv, 'base_state.json'), await fixture('openhands', 'base_state.json'))
    const fromState = await openhandsAdapter.parse(rawRun('', { home: dirs.home }), ctx)
    expect(fromState.selfReport?.input_tokens).toBe(14210)
    await writeFile(openhandsTrajectoryPath(ctx), await fixture('openhands', 'legacy-trajectory.json'))
    const fromTrajectory = await openhandsAdapter.parse(rawRun('', { home: dirs.home }), ctx)
    expect(fromTrajectory.selfReport?.input_tokens).toBe(12300)
  })
})
