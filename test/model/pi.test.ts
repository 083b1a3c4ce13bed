import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ScriptedModel, startScriptedModel } from '../../src/model/server.js'
import { GREETING_INSTRUCTION, makeWorkspace, taskTestsPass, writePanel } from './fixtures.js'
import { ensureNpmPackage, isolatedHarnessRun } from './harness-install.js'

const PI = { pkg: '@mariozechner/pi-coding-agent', version: '0.73.1' }
const MODEL = 'gpt-5-mini'

// Pi's provider `api` per wire API, and the base URL its SDK wants (design/harnesses.md §3.5).
const PI_APIS = {
  chat: { api: 'openai-completions', suffix: '/v1' },
  responses: { api: 'openai-responses', suffix: '/v1' },
  anthropic: { api: 'anthropic-messages', suffix: '' },
  gemini: { api: 'google-generative-ai', suffix: '/v1beta' },
} as const

let cli: string | null = null
let skipReason = ''
let panel: string

beforeAll(async () => {
  panel = writePanel()
  const r = await ensureNpmPackage(PI.pkg, PI.version)
  if ('skip' in r) skipReason = r.skip
  else cli = path.join(r.root, 'node_modules', PI.pkg, 'dist', 'cli.js')
}, 600_000)

/** Run real Pi headless in `workspace` with a fresh HOME, against `origin`, speaking `wire`. */
async function runPi(origin: string, wire: keyof typeof PI_APIS, workspace: string): Promise<string> {
  const { home, env: base } = isolatedHarnessRun('hw-model-pi-')
  const agentDir = path.join(home, '.pi', 'agent')
  mkdirSync(agentDir, { recursive: true })
  const { api, suffix } = PI_APIS[wire]
  const model = {
    id: MODEL,
    name: MODEL,
    reasoning: false,
    input: ['text'],
    contextWindow: 200000,
    maxTokens: 8192,
  }
  const cost = { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0.3 }
  writeFileSync(
    path.join(agentDir, 'models.json'),
    JSON.stringify({
      providers: {
        scripted: {
          baseUrl: `${origin}${suffix}`,
          api,
          apiKey: 'sk-scripted',
          ...(wire === 'chat'
            ? { compat: { supportsDeveloperRole: false, supportsReasoningEffort: false } }
            : {}),
          models: [{ ...model, cost }],
        },
      },
    }),
  )
  writeFileSync(
    path.join(agentDir, 'settings.json'),
    JSON.stringify({
      defaultProvider: 'scripted',
      defaultModel: MODEL,
      quietStartup: true,
      enableInstallTelemetry: false,
      retry: { enabled: false },
    }),
  )
  const env = {
    ...base,
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: '1',
    PI_SKIP_VERSION_CHECK: '1',
    PI_TELEMETRY: '0',
  }
  const args = [cli!, '-p', '--mode', 'json', '--offline', '--provider', 'scripted', '--model', MODEL]
  // stdin closed: with an open pipe Pi waits for more prompt text.
  const r = await execa(process.execPath, [...args, GREETING_INSTRUCTION], {
    cwd: workspace,
    env,
    extendEnv: false,
    stdin: 'ignore',
    timeout: 90_000,
    reject: false,
  })
  if (r.exitCode !== 0) throw new Error(`pi exited ${r.exitCode}: ${r.stderr.slice(-2000)}`)
  return r.stdout
}

describe('real Pi driven by the scripted model', () => {
  let model: ScriptedModel
  const lines: string[] = []
  beforeAll(async () => {
    model = await startScriptedModel({
      panelDirs: [panel],
      config: { seed: 3, success_rate: 1, tasks: { 'fix-greeting-fails': { success_rate: 0 } } },
      log: (l) => lines.push(l),
    })
  })
  afterAll(() => model?.close())

  for (const wire of Object.keys(PI_APIS) as (keyof typeof PI_APIS)[]) {
    it(`solves the fixture task over ${wire}: inspect → solve → test → final, tests pass`, async (ctx) => {
      if (!cli) ctx.skip(`Pi not available: ${skipReason}`)
      const taskDir = path.join(panel, 'fix-greeting')
      const ws = makeWorkspace(taskDir)
      expect(taskTestsPass(taskDir, ws)).toBe(false)
      const before = model.records().length
      const stdout = await runPi(model.origin, wire, ws)
      const recs = model.records().slice(before)
      expect(recs.map((r) => r.api)).toEqual([wire, wire, wire, wire])
      expect(recs.map((r) => r.task)).toEqual(Array(4).fill('fix-greeting'))
      expect(recs.map((r) => r.action?.step)).toEqual(['inspect', 'solve', 'test', 'final'])
      expect(recs.map((r) => r.action?.kind === 'tool' && r.action.tool)).toEqual([
        'read',
        'bash',
        'bash',
        false,
      ])
      // Every later turn re-reads the earlier prefix from the simulated cache.
      for (const r of recs.slice(1)) expect(r.usage!.cacheRead).toBeGreaterThan(1000)
      expect(taskTestsPass(taskDir, ws)).toBe(true)
      expect(readFileSync(path.join(ws, 'NOTES.md'), 'utf8')).toBe('fixed $HOME typo\n')
      expect(stdout).toContain('Done: I applied the fix')
    }, 180_000)
  }
})
