import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ScriptedModel, startScriptedModel } from '../../src/model/server.js'
import { GREETING_INSTRUCTION, makeWorkspace, taskTestsPass, writePanel } from './fixtures.js'
import { ensureNpmPackage, isolatedHarnessRun } from './harness-install.js'

const OPENCODE = { pkg: 'opencode-ai', version: '1.18.33' }
const MODEL = 'gpt-5-mini'

let bin: string | null = null
let skipReason = ''
let panel: string
let model: ScriptedModel

beforeAll(async () => {
  panel = writePanel()
  // --ignore-scripts: the postinstall would run `opencode --version` with the installing HOME
  // (design/harnesses.md §4.1); the native binary is run directly instead.
  const r = await ensureNpmPackage(OPENCODE.pkg, OPENCODE.version, { ignoreScripts: true })
  if ('skip' in r) skipReason = r.skip
  else bin = path.join(r.root, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode')
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    bin = null
    skipReason = `the test runs the linux-x64 binary; this is ${process.platform}-${process.arch}`
  }
  model = await startScriptedModel({ panelDirs: [panel], config: { seed: 1, success_rate: 1 } })
}, 600_000)
afterAll(() => model?.close())

/** Real OpenCode, headless, fresh HOME, chat completions to the scripted model. */
async function runOpenCode(workspace: string): Promise<string> {
  const { home, env: base } = isolatedHarnessRun('hw-model-oc-')
  const configDir = path.join(home, '.config', 'opencode')
  mkdirSync(path.join(configDir, 'node_modules'), { recursive: true })
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model: `scripted/${MODEL}`,
    small_model: `scripted/${MODEL}`,
    enabled_providers: ['scripted'],
    permission: { edit: 'allow', bash: 'allow', webfetch: 'allow' },
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted',
        options: { baseURL: `${model.origin}/v1`, apiKey: '{env:SCRIPTED_API_KEY}' },
        models: { [MODEL]: { name: MODEL, tool_call: true, limit: { context: 200000, output: 8192 } } },
      },
    },
  }
  writeFileSync(path.join(configDir, 'opencode.json'), JSON.stringify(config))
  // A package.json whose dependency the lock lists, plus node_modules/, stop OpenCode's background
  // `npm install @opencode-ai/plugin` into the config folder (design/harnesses.md §4.1).
  const deps = { '@opencode-ai/plugin': '*' }
  writeFileSync(path.join(configDir, 'package.json'), JSON.stringify({ dependencies: deps }))
  writeFileSync(
    path.join(configDir, 'package-lock.json'),
    JSON.stringify({ name: 'opencode-config', lockfileVersion: 3, packages: { '': { dependencies: deps } } }),
  )
  const env = {
    ...base,
    OPENCODE_CONFIG: path.join(configDir, 'opencode.json'),
    SCRIPTED_API_KEY: 'sk-scripted',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_SHARE: '1',
  }
  const args = ['run', '--format', 'json', '--auto', '--pure', '-m', `scripted/${MODEL}`, '--dir', workspace]
  const r = await execa(bin!, [...args, GREETING_INSTRUCTION], {
    cwd: workspace,
    env,
    extendEnv: false,
    stdin: 'ignore',
    timeout: 150_000,
    reject: false,
  })
  if (r.exitCode !== 0) throw new Error(`opencode exited ${r.exitCode}: ${r.stderr.slice(-2000)}`)
  return r.stdout
}

describe('real OpenCode driven by the scripted model', () => {
  it('title call, then inspect → solve → test → final; the task tests pass', async (ctx) => {
    if (!bin) ctx.skip(`OpenCode not available: ${skipReason}`)
    const taskDir = path.join(panel, 'fix-greeting')
    const ws = makeWorkspace(taskDir)
    const stdout = await runOpenCode(ws)
    const recs = model.records()
    // OpenCode quotes the prompt and escapes its quotes; the task is still recognised on every request.
    expect(recs.map((r) => r.task)).toEqual(Array(5).fill('fix-greeting'))
    expect(recs.map((r) => r.action?.step)).toEqual(['title', 'inspect', 'solve', 'test', 'final'])
    expect(recs[1]!.action).toMatchObject({ tool: 'read', args: { filePath: path.join(ws, 'greet.sh') } })
    for (const r of recs.slice(2)) expect(r.usage!.cacheRead).toBeGreaterThan(1024)
    expect(taskTestsPass(taskDir, ws)).toBe(true)
    expect(readFileSync(path.join(ws, 'NOTES.md'), 'utf8')).toBe('fixed $HOME typo\n')
    const finish = stdout
      .split('\n')
      .filter((l) => l.includes('"step_finish"'))
      .map((l) => JSON.parse(l) as { part: { tokens: { cache: { read: number } } } })
    // OpenCode echoes the cache reads it was told about
    expect(finish.at(-1)!.part.tokens.cache.read).toBe(recs.at(-1)!.usage!.cacheRead)
  }, 240_000)
})
