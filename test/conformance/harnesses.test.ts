import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AttemptContext, InstalledHarness, ParsedRun } from '../../src/harnesses/contract.js'
import { defaultCacheDir, readMarker } from '../../src/harnesses/install.js'
import { adapterFor } from '../../src/harnesses/registry.js'
import type { HarnessName, WireApi } from '../../src/manifest/harness-names.js'
import type { ModelRequestRecord } from '../../src/model/engine.js'
import type { RunnerResult, RunnerSpec } from './attempt-runner.js'
import { netnsSupport, offlineArgv } from './netns.js'
import { makeWorkspace, SUM_INSTRUCTION, writeConformancePanel } from './panel.js'

/** The harnesses runnable here, pinned to the versions verified in design/harnesses.md, with their wire API. */
const PINNED: { harness: HarnessName; version: string; api: WireApi; model: string }[] = [
  { harness: 'pi', version: '0.73.1', api: 'chat', model: 'gpt-5-mini' },
  { harness: 'opencode', version: '1.18.33', api: 'chat', model: 'gpt-5-mini' },
  { harness: 'codex', version: '0.171.0', api: 'responses', model: 'gpt-5-mini' },
  { harness: 'claude-code', version: '2.1.332', api: 'anthropic', model: 'claude-sonnet-4-5' },
  { harness: 'gemini-cli', version: '0.61.0', api: 'gemini', model: 'gemini-2.5-flash' },
  { harness: 'copilot', version: '1.0.102', api: 'chat', model: 'gpt-5-mini' },
  { harness: 'qwen-code', version: '0.24.4', api: 'chat', model: 'qwen3-coder-plus' },
]

/** `HW_CONFORMANCE=pi,codex` runs a subset. */
const only = (process.env.HW_CONFORMANCE ?? '').split(',').filter((s) => s.trim() !== '')
const selected = PINNED.filter((p) => only.length === 0 || only.includes(p.harness))

const RUN_TIMEOUT_MS = 240_000
const HERE = path.dirname(fileURLToPath(import.meta.url))
const netns: ReturnType<typeof netnsSupport> =
  process.env.HW_CONFORMANCE_NETNS === '0'
    ? { ok: false, reason: 'network isolation turned off (HW_CONFORMANCE_NETNS=0)' }
    : netnsSupport()

/** Harness state folders a run must never touch in the runner's own HOME. */
const RUNNER_STATE = [
  '.pi',
  '.codex',
  '.claude',
  '.claude.json',
  '.gemini',
  '.copilot',
  '.qwen',
  '.config/opencode',
  '.local/share/opencode',
  '.cache/opencode',
  '.cache/copilot',
]

type Check = { status: 'pass' | 'fail' | 'skip'; note: string }
interface HarnessSummary {
  harness: string
  version: string
  installMb: number | null
  installS: number | null
  wallS: number[]
  /** Launch → first model request, seconds, per run. */
  startupS: number[]
  checks: Record<string, Check>
}
const summaries: HarnessSummary[] = []

interface Attempt {
  ctx: AttemptContext
  homeWasEmpty: boolean
  result: RunnerResult
  records: ModelRequestRecord[]
  parsed: ParsedRun
  testPassed: boolean
  /** The harness itself ran the task's test command (test.sh leaves .hw-tested). */
  harnessRanTests: boolean
  sumBefore: string
  sumAfter: string
}

let panel: { panelDir: string; taskDir: string }
let scratch: string

beforeAll(async () => {
  panel = writeConformancePanel()
  scratch = await mkdtemp(path.join(os.tmpdir(), 'hw-conformance-'))
})

afterAll(async () => {
  const table = renderTable(summaries)
  const file = path.join(os.tmpdir(), 'hw-conformance-results.md')
  writeFileSync(file, table)
  process.stdout.write(`\n${table}\n(written to ${file})\n`)
  // HW_CONFORMANCE_KEEP=1 keeps every attempt folder (home, workspace, stdout, stderr) for a look.
  if (process.env.HW_CONFORMANCE_KEEP) process.stdout.write(`attempt folders kept in ${scratch}\n`)
  else await rm(scratch, { recursive: true, force: true })
  await rm(panel.panelDir, { recursive: true, force: true })
})

for (const pin of selected) {
  describe.sequential(`${pin.harness}@${pin.version}`, () => {
    const adapter = adapterFor(pin.harness)
    const summary: HarnessSummary = {
      harness: pin.harness,
      version: pin.version,
      installMb: null,
      installS: null,
      wallS: [],
      startupS: [],
      checks: {},
    }
    summaries.push(summary)
    let installed: InstalledHarness | null = null
    let installError: string | null = null
    let probed: string | null = null
    let first: Attempt | null = null
    let second: Attempt | null = null
    let installBefore: string[] = []
    let installAfter: string[] = []
    let runnerStateBefore = ''
    let runnerStateAfter = ''

    const record = (name: string, status: Check['status'], note = '') => {
      summary.checks[name] = { status, note }
    }

    beforeAll(async () => {
      runnerStateBefore = runnerStateSnapshot()
      try {
        installed = await adapter.install(pin.version, {
          cacheDir: defaultCacheDir(),
          log: (l) => process.stdout.write(`[${pin.harness}] ${l}\n`),
        })
      } catch (e) {
        installError = (e as Error).message
        return
      }
      const marker = await readMarker(installed.root)
      summary.installMb = marker ? Math.round(marker.bytes / 1e6) : null
      summary.installS = marker ? Math.round(marker.seconds * 10) / 10 : null
      probed = await adapter.probeVersion(installed)
      installBefore = listTree(installed.root)
      first = await runAttempt(installed, pin, 'first')
      second = await runAttempt(installed, pin, 'second')
      installAfter = listTree(installed.root)
      runnerStateAfter = runnerStateSnapshot()
      summary.wallS = [first, second].map((a) => Math.round(a.result.wallMs / 100) / 10)
      summary.startupS = [first, second].map((a) => Math.round((a.result.startupMs ?? Number.NaN) / 100) / 10)
    }, 1_200_000)

    it('installs the pinned version into the shared cache', () => {
      record('install', installed ? 'pass' : 'fail', installError ?? '')
      expect(installError).toBeNull()
      expect(installed?.root.startsWith(defaultCacheDir())).toBe(true)
    })

    it('reports the pinned version', () => {
      record('version', probed === pin.version ? 'pass' : 'fail', `probed ${probed}`)
      expect(probed).toBe(pin.version)
    })

    it('starts non-interactively: exit 0 with stdin closed, within the time limit', () => {
      const a = need(first)
      const ok = a.result.exitCode === 0 && !a.result.timedOut && a.parsed.startupError === null
      record(
        'headless',
        ok ? 'pass' : 'fail',
        `exit ${a.result.exitCode}${a.result.timedOut ? ' (timed out)' : ''}${a.parsed.startupError ? `: ${a.parsed.startupError}` : ''}`,
      )
      expect(a.result.timedOut).toBe(false)
      expect(a.parsed.startupError).toBeNull()
      expect(a.result.exitCode, a.result.stderr.slice(-2000)).toBe(0)
    })

    it('asks the route for the requested model and no other', () => {
      const a = need(first)
      const models = [...new Set(a.records.map((r) => r.model))]
      const ok = a.records.length > 0 && models.length === 1 && models[0] === pin.model
      record(
        'model',
        ok ? 'pass' : 'fail',
        `${a.records.length} requests, models: ${models.join(', ') || 'none'}`,
      )
      expect(a.records.length).toBeGreaterThan(0)
      expect(models).toEqual([pin.model])
    })

    it('reads, edits and tests: the file changes and the task tests pass', () => {
      const a = need(first)
      const steps = a.records.map((r) => r.action?.step ?? 'fault')
      const ok =
        a.sumAfter !== a.sumBefore && a.testPassed && steps.includes('solve') && steps.includes('test')
      record('task', ok ? 'pass' : 'fail', `steps: ${steps.join('→')}`)
      expect(a.sumAfter).not.toBe(a.sumBefore)
      expect(a.sumAfter).toContain('$1 + $2')
      expect(a.testPassed).toBe(true)
      expect(steps).toEqual(expect.arrayContaining(['inspect', 'solve', 'test', 'final']))
    })

    it('runs its tools without asking for permission', () => {
      const a = need(first)
      const final = a.records.find((r) => r.action?.step === 'final')
      // Every tool the script asked for ran: the edit landed, the harness ran the tests itself (the
      // marker), and the final answer came after all three tool results. A refused tool leaves no trace.
      const edited = a.sumAfter !== a.sumBefore
      const ok = edited && a.harnessRanTests && final !== undefined && final.step >= 3
      record(
        'permissions',
        ok ? 'pass' : 'fail',
        `edit applied: ${edited}; tests run by the harness: ${a.harnessRanTests}; final after ${final?.step ?? '?'} tool results`,
      )
      expect(edited).toBe(true)
      expect(a.harnessRanTests).toBe(true)
      expect(final?.step).toBeGreaterThanOrEqual(3)
    })

    it('self-reported tokens reconcile with what the server saw', (t) => {
      const a = need(first)
      const self = a.parsed.selfReport
      if (!self || self.input_tokens === null || self.output_tokens === null) {
        record('tokens', 'skip', 'the harness reports no token counts')
        t.skip('the harness reports no token counts')
        return
      }
      // OpenCode's step_finish events leave out its title-generation call (harnesses.md §3.2).
      const counted = a.records.filter((r) => !(pin.harness === 'opencode' && r.action?.step === 'title'))
      const server = {
        input: sum(counted.map((r) => r.usage?.inputTotal ?? 0)),
        output: sum(counted.map((r) => r.usage?.output ?? 0)),
        cacheRead: sum(counted.map((r) => r.usage?.cacheRead ?? 0)),
      }
      const note = `self ${self.input_tokens}/${self.output_tokens} (cache ${self.cache_read_tokens}) vs server ${server.input}/${server.output} (cache ${server.cacheRead})`
      const ok = self.input_tokens === server.input && self.output_tokens === server.output
      record('tokens', ok ? 'pass' : 'fail', note)
      expect({ input: self.input_tokens, output: self.output_tokens }, note).toEqual({
        input: server.input,
        output: server.output,
      })
    })

    it('a second run in the same cache starts clean', () => {
      const a = need(first)
      const b = need(second)
      const leaked = homeMentions(b.ctx.home, a.ctx.home)
      const added = installAfter.filter((f) => !installBefore.includes(f))
      const ok =
        b.homeWasEmpty && leaked.length === 0 && added.length === 0 && b.testPassed && b.result.exitCode === 0
      record(
        'second run',
        ok ? 'pass' : 'fail',
        `home empty before: ${b.homeWasEmpty}; mentions of run 1: ${leaked.length}; files added to the install: ${added.length}`,
      )
      expect(b.homeWasEmpty).toBe(true)
      expect(leaked).toEqual([])
      expect(added).toEqual([])
      expect(b.result.exitCode).toBe(0)
      expect(b.testPassed).toBe(true)
    })

    it('leaves the runner HOME untouched', () => {
      record('runner HOME', runnerStateAfter === runnerStateBefore ? 'pass' : 'fail')
      expect(runnerStateAfter).toBe(runnerStateBefore)
    })

    it('sends nothing off the machine (loopback-only network namespace)', (t) => {
      if (!netns.ok) {
        record('offline', 'skip', netns.reason)
        t.skip(netns.reason)
        return
      }
      const a = need(first)
      const names = a.result.dnsNames ?? []
      const ok = names.length === 0 && a.records.length > 0
      record(
        'offline',
        ok ? 'pass' : 'fail',
        names.length ? `DNS names tried: ${names.join(', ')}` : 'no DNS lookups',
      )
      expect(names).toEqual([])
      expect(a.records.length).toBeGreaterThan(0)
    })

    if (pin.harness === 'opencode') {
      it('field case F14: a stored vendor login in the home does not divert requests', async () => {
        const a = await runAttempt(need(installed), pin, 'stored-login', (home) => {
          const dir = path.join(home, '.local', 'share', 'opencode')
          mkdirSync(dir, { recursive: true })
          writeFileSync(
            path.join(dir, 'auth.json'),
            JSON.stringify({
              anthropic: {
                type: 'oauth',
                refresh: 'stale-refresh',
                access: 'stale-access',
                expires: 4102444800000,
              },
              openai: { type: 'api', key: 'sk-leftover' },
            }),
          )
        })
        const ok = a.records.length > 0 && a.result.exitCode === 0 && a.testPassed
        record('F14 stored login', ok ? 'pass' : 'fail', `${a.records.length} requests reached the route`)
        expect(a.records.length).toBeGreaterThan(0)
        expect(a.testPassed).toBe(true)
      }, 600_000)
    }

    function need<T>(v: T | null): T {
      if (v === null) throw new Error(installError ?? 'the attempt did not run')
      return v
    }
  })
}

/** One attempt: fresh home/tmp/workspace, prepare, run in the attempt runner, parse, grade. */
async function runAttempt(
  installed: InstalledHarness,
  pin: (typeof PINNED)[number],
  label: string,
  seedHome?: (home: string) => void,
): Promise<Attempt> {
  const base = path.join(scratch, `${pin.harness}-${label}`)
  const home = path.join(base, 'home')
  const tmp = path.join(base, 'tmp')
  mkdirSync(home, { recursive: true })
  mkdirSync(tmp, { recursive: true })
  const homeWasEmpty = readdirSync(home).length === 0
  seedHome?.(home)
  const workspace = makeWorkspace(panel.taskDir, base)
  const sumBefore = readFileSync(path.join(workspace, 'sum.sh'), 'utf8')
  const port = await freePort()
  const ctx: AttemptContext = {
    workspace,
    home,
    tmp,
    prompt: SUM_INSTRUCTION,
    model: pin.model,
    api: pin.api,
    endpoint: { origin: `http://127.0.0.1:${port}`, apiKey: `sk-hw-conformance-${label}` },
    config: { args: [], env: {}, pass_env: [], files: {} },
    timeoutS: RUN_TIMEOUT_MS / 1000,
  }
  const adapter = adapterFor(pin.harness)
  const invocation = await adapter.prepare(installed, ctx)
  const spec: RunnerSpec = {
    invocation: {
      command: invocation.command,
      args: invocation.args,
      env: invocation.env,
      cwd: invocation.cwd,
      stdin: invocation.stdin,
    },
    port,
    panelDir: panel.panelDir,
    timeoutMs: RUN_TIMEOUT_MS,
    dns: netns.ok,
    resultFile: path.join(base, 'result.json'),
  }
  const specFile = path.join(base, 'spec.json')
  writeFileSync(specFile, JSON.stringify(spec))
  const inner = [process.execPath, '--import', 'tsx', path.join(HERE, 'attempt-runner.ts'), specFile]
  const argv = netns.ok ? offlineArgv(inner, base) : inner
  const outer = await execa(argv[0]!, argv.slice(1), {
    reject: false,
    stdin: 'ignore',
    timeout: RUN_TIMEOUT_MS + 60_000,
    cwd: path.resolve(HERE, '..', '..'),
  })
  if (!existsSync(spec.resultFile)) {
    throw new Error(`attempt runner wrote no result (exit ${outer.exitCode}): ${outer.stderr.slice(-2000)}`)
  }
  const result = JSON.parse(readFileSync(spec.resultFile, 'utf8')) as RunnerResult
  writeFileSync(path.join(base, 'stdout.txt'), result.stdout)
  writeFileSync(path.join(base, 'stderr.txt'), result.stderr)
  const parsed = await adapter.parse(
    { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode, signal: result.signal, home },
    ctx,
  )
  const harnessRanTests = existsSync(path.join(workspace, '.hw-tested'))
  const test = await execa('sh', ['test.sh'], { cwd: workspace, reject: false })
  return {
    ctx,
    homeWasEmpty,
    result,
    records: result.records as ModelRequestRecord[],
    parsed,
    testPassed: test.exitCode === 0,
    harnessRanTests,
    sumBefore,
    sumAfter: readFileSync(path.join(workspace, 'sum.sh'), 'utf8'),
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

/** Relative paths and sizes of every file under a folder (symlinks not followed). */
function listTree(root: string): string[] {
  const out: string[] = []
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(`${path.relative(root, p)}:${lstatSync(p).size}`)
    }
  }
  walk(root)
  return out.sort()
}

/** Files of a home (not following links, up to 2 MB each) whose text names another attempt's home. */
function homeMentions(home: string, other: string): string[] {
  const hits: string[] = []
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile() && statSync(p).size < 2_000_000 && readFileSync(p, 'latin1').includes(other))
        hits.push(p)
    }
  }
  walk(home)
  return hits
}

function runnerStateSnapshot(): string {
  return RUNNER_STATE.map((rel) => {
    const p = path.join(os.homedir(), rel)
    return existsSync(p) ? `${rel}:${statSync(p).mtimeMs}` : `${rel}:absent`
  }).join('\n')
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0)
}

const CHECKS = [
  'install',
  'version',
  'headless',
  'model',
  'task',
  'permissions',
  'tokens',
  'second run',
  'runner HOME',
  'offline',
  'F14 stored login',
]

/** The conformance results as a Markdown table (one row per harness) plus the notes of every check. */
export function renderTable(rows: HarnessSummary[]): string {
  const mark = (c?: Check) =>
    !c ? '–' : c.status === 'pass' ? 'pass' : c.status === 'skip' ? 'skip' : 'FAIL'
  const head = `| harness | version | install MB / s | wall s (run 1, run 2) | to 1st request s | ${CHECKS.join(' | ')} |`
  const sep = `|${' --- |'.repeat(CHECKS.length + 5)}`
  const lines = rows.map(
    (r) =>
      `| ${r.harness} | ${r.version} | ${r.installMb ?? '?'} / ${r.installS ?? '?'} | ${r.wallS.join(', ') || '–'} | ${r.startupS.join(', ') || '–'} | ${CHECKS.map((c) => mark(r.checks[c])).join(' | ')} |`,
  )
  const notes = rows.flatMap((r) =>
    Object.entries(r.checks)
      .filter(([, c]) => c.note)
      .map(([name, c]) => `- ${r.harness} / ${name}: ${c.status} — ${c.note}`),
  )
  return [head, sep, ...lines, '', ...notes].join('\n')
}
