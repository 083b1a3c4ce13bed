import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import {
  miniSweAgentAdapter,
  miniTrajectoryPath,
  parseMiniTrajectory,
} from '../../src/harnesses/mini-swe-agent.js'
import { fixture, isolatedEnvKeys, leaks, makeCtx, rawRun, useAttemptDirs } from './helpers.js'

const installed = {
  harness: 'mini-swe-agent' as const,
  version: '2.2.0',
  bin: '/cache/pypi__mini-swe-agent@2.2.0/venv/bin/mini',
  root: '/cache/pypi__mini-swe-agent@2.2.0',
}

describe('mini-swe-agent adapter', () => {
  const dirs = useAttemptDirs()

  it('layers an override config on mini.yaml and runs yolo without exit confirmation', async () => {
    const ctx = makeCtx(dirs, { model: 'gpt-5' })
    const inv = await miniSweAgentAdapter.prepare(installed, ctx)
    const override = path.join(dirs.home, '.config', 'mini-swe-agent', 'hw.yaml')
    expect(parseYaml(await readFile(override, 'utf8'))).toEqual({
      model: {
        model_name: 'openai/gpt-5',
        model_kwargs: { api_base: 'http://127.0.0.1:4555/v1' },
        cost_tracking: 'ignore_errors',
      },
      agent: { mode: 'yolo', confirm_exit: false, step_limit: 0, cost_limit: 0 },
    })
    expect(inv.command).toBe(installed.bin)
    expect(inv.args).toEqual([
      '-c',
      'mini.yaml',
      '-c',
      override,
      '-m',
      'openai/gpt-5',
      '--yolo',
      '--exit-immediately',
      '-o',
      miniTrajectoryPath(ctx),
      '-t',
      ctx.prompt,
    ])
    expect(Object.keys(inv.env).sort()).toEqual(
      isolatedEnvKeys(
        'MSWEA_GLOBAL_CONFIG_DIR',
        'MSWEA_CONFIGURED',
        'MSWEA_COST_TRACKING',
        'MSWEA_SILENT_STARTUP',
        'MSWEA_VISUAL_MODE_DEFAULT',
        'OPENAI_API_KEY',
        'LITELLM_LOCAL_MODEL_COST_MAP',
      ),
    )
    expect(inv.env.OPENAI_API_KEY).toBe('sk-hw-attempt-1')
    expect(inv.env.PATH?.split(':')[0]).toBe('/cache/pypi__mini-swe-agent@2.2.0/venv/bin')
    expect(leaks(inv.env)).toEqual([])
  })

  it('names the model the LiteLLM way per wire API', async () => {
    const a = makeCtx(dirs, { api: 'anthropic' })
    const inv = await miniSweAgentAdapter.prepare(installed, a)
    const cfg = parseYaml(await readFile(path.join(dirs.home, '.config/mini-swe-agent/hw.yaml'), 'utf8'))
    expect(cfg.model).toMatchObject({
      model_name: 'anthropic/claude-sonnet-4-5',
      model_kwargs: { api_base: 'http://127.0.0.1:4555' },
    })
    expect(inv.env.ANTHROPIC_API_KEY).toBe('sk-hw-attempt-1')
    await miniSweAgentAdapter.prepare(installed, makeCtx(dirs, { api: 'responses', model: 'gpt-5' }))
    const r = parseYaml(await readFile(path.join(dirs.home, '.config/mini-swe-agent/hw.yaml'), 'utf8'))
    expect(r.model).toMatchObject({ model_name: 'openai/responses/gpt-5', model_class: 'litellm_response' })
  })

  it('parses a trajectory file: usage per assistant message, api calls, exit status', async () => {
    const traj = JSON.parse(await fixture('mini-swe-agent', 'last_mini_run.traj.json'))
    const parsed = parseMiniTrajectory(rawRun('👋 This is mini-swe-agent\n'), traj)
    expect(parsed.selfReport).toEqual({
      input_tokens: 3090,
      output_tokens: 43,
      cache_read_tokens: 1408,
      cache_write_tokens: null,
      cost_usd: null,
      requests: 2,
      turns: 2,
    })
    // Empty submission: the last assistant text is the answer.
    expect(parsed.finalMessage).toMatch(/^THOUGHT: done, submitting\./)
    expect(parsed.trajectory).toHaveLength(5)
    expect(parsed.startupError).toBeNull()
  })

  it('no trajectory and a non-zero exit is a startup error from stderr', () => {
    const parsed = parseMiniTrajectory(
      rawRun('', { stderr: 'Traceback …\nValueError: No default model set.\n', exitCode: 1 }),
      null,
    )
    expect(parsed.selfReport).toBeNull()
    expect(parsed.startupError).toBe('exit 1: ValueError: No default model set.')
  })
})
