import { describe, expect, it } from 'vitest'
import type { Invocation } from '../../src/harnesses/contract.js'
import { RESUME_RECIPES } from '../../src/harnesses/resume.js'
import { HARNESS_NAMES } from '../../src/manifest/harness-names.js'

const inv = (command: string, args: string[]): Invocation => ({ command, args, env: {}, cwd: '/w' })

describe('resume recipes (rig.md §0: each verified there on the real CLI)', () => {
  it('Claude Code, Gemini CLI, Qwen Code, Copilot: --session-id U first, then --resume U', () => {
    for (const h of ['claude-code', 'gemini-cli', 'qwen-code', 'copilot'] as const) {
      const r = RESUME_RECIPES[h]
      expect(r?.start('U1'), h).toEqual(['--session-id', 'U1'])
      const js = h === 'gemini-cli' || h === 'qwen-code'
      const next = r?.resume(
        inv(js ? process.execPath : '/bin/x', [...(js ? ['/c/cli.js'] : []), '-p', 'turn two']),
        'U1',
      )
      expect(next?.args, h).toEqual([...(js ? ['/c/cli.js'] : []), '--resume', 'U1', '-p', 'turn two'])
    }
  })

  it('Codex: `exec … resume <thread_id> <prompt>`, the id from thread.started', () => {
    const r = RESUME_RECIPES.codex
    expect(r?.start('x')).toBeNull()
    expect(r?.sessionOf([{ type: 'other' }, { type: 'thread.started', thread_id: 'T9' }])).toBe('T9')
    expect(r?.resume(inv('/c/codex', ['exec', '--json', '-C', '/w', 'turn two']), 'T9').args).toEqual([
      'exec',
      '--json',
      '-C',
      '/w',
      'resume',
      'T9',
      'turn two',
    ])
  })

  it('OpenCode: run --session <sessionID> (prompt stays on stdin); Pi: --session <id> after the script', () => {
    expect(RESUME_RECIPES.opencode?.sessionOf([{ type: 'step_start', sessionID: 'ses_1' }])).toBe('ses_1')
    const oc = RESUME_RECIPES.opencode?.resume(
      { ...inv('/c/oc', ['run', '--format', 'json']), stdin: 'two' },
      'ses_1',
    )
    expect(oc?.args).toEqual(['run', '--session', 'ses_1', '--format', 'json'])
    expect(oc?.stdin).toBe('two')
    expect(RESUME_RECIPES.pi?.sessionOf([{ type: 'session', id: 'p1' }])).toBe('p1')
    expect(RESUME_RECIPES.pi?.resume(inv(process.execPath, ['/c/cli.js', '-p', 'two']), 'p1').args).toEqual([
      '/c/cli.js',
      '--session',
      'p1',
      '-p',
      'two',
    ])
  })

  it('no session id found in forged or empty output', () => {
    for (const h of ['codex', 'opencode', 'pi'] as const) {
      expect(RESUME_RECIPES[h]?.sessionOf([]), h).toBeNull()
      expect(RESUME_RECIPES[h]?.sessionOf([null, 5, 'x', { type: 'session', id: 7 }]), h).toBeNull()
    }
  })

  it('every harness with a bridge recipe but agentd can resume; the others cannot', () => {
    expect(HARNESS_NAMES.filter((h) => RESUME_RECIPES[h] !== null).sort()).toEqual([
      'claude-code',
      'codex',
      'copilot',
      'gemini-cli',
      'opencode',
      'pi',
      'qwen-code',
    ])
  })
})
