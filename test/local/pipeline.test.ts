import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { installDir, MARKER } from '../../src/harnesses/install.js'
import { loadManifest } from '../../src/manifest/load.js'
import { installAll, runLocal } from '../../src/pipeline/local.js'
import { HwError } from '../../src/util/errors.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

// `local` with `command` cells (real child processes, no harness install) on two built-in tasks.
function manifest(command: string, seed = 1, passEnv: string[] = []): string {
  return writeManifest({
    schema_version: 1,
    experiment: { id: 'local-guards' },
    model: { id: 'gpt-5-mini', provider: 'scripted', api: 'chat', prices: { input: 1, output: 2 } },
    benchmark: { family: 'builtin', revision: 'core-v1', verifier: { timeout_s: 60 } },
    panel: { source: 'builtin', name: 'core', instances: ['js-fix-slugify', 'py-fix-mutable-default'] },
    cells: [
      { id: 'a', harness: 'command', version: '1.0.0', config: { command, pass_env: passEnv } },
      { id: 'b', harness: 'command', version: '1.0.0', config: { command, pass_env: passEnv } },
    ],
    baseline: 'a',
    budgets: { timeout_s: 60 },
    concurrency: 2,
    seed,
    confirmation: { enabled: false, max_blocks: 2 },
    reporting: { bootstrap_resamples: 200 },
    // auto: namespace+uid where root or passwordless sudo allows it, else env-only.
    sandbox: { allow_unisolated: true },
  })
}

const quiet = () => {}
const attempts = (out: string, cell: string) =>
  readFileSync(path.join(out, 'artifacts', `hw-local-guards-${cell}-0`, 'attempts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map(
      (l) =>
        JSON.parse(l) as {
          instance_id: string
          final: boolean
          exit: { class: string; reason: string | null }
        },
    )

describe('harness-watch local: the output folder is guarded', () => {
  it('refuses a second run writing the same folder at the same time', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'hw-local-'))
    const file = manifest('sleep 2')
    const first = runLocal({ manifestFile: file, out, log: quiet })
    await new Promise((r) => setTimeout(r, 500))
    const err = await runLocal({ manifestFile: file, out, log: quiet }).catch((e) => e)
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).code).toBe('out_locked')
    const r = await first
    expect(r.rounds[0]?.legs.map((l) => l.status)).toEqual(['complete', 'complete'])
    expect(attempts(out, 'a')).toHaveLength(2)
  })

  it('never mixes runs of two manifest versions; --fresh moves the old run aside', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'hw-local-'))
    await runLocal({ manifestFile: manifest('true'), out, log: quiet })
    const plan = readFileSync(path.join(out, 'plan.json'), 'utf8')
    const err = await runLocal({ manifestFile: manifest('true', 2), out, log: quiet }).catch((e) => e)
    expect((err as HwError).code).toBe('out_mismatch')
    expect(readFileSync(path.join(out, 'plan.json'), 'utf8')).toBe(plan)
    const lines: string[] = []
    await runLocal({ manifestFile: manifest('true', 2), out, log: (l) => lines.push(l), fresh: true })
    const aside = readdirSync(path.dirname(out)).filter((n) => n.startsWith(`${path.basename(out)}.prev-`))
    expect(aside).toHaveLength(1)
    expect(existsSync(path.join(path.dirname(out), aside[0] as string, 'plan.json'))).toBe(true)
    expect(JSON.parse(readFileSync(path.join(out, 'plan.json'), 'utf8')).seed).toBe(2)
    expect(lines.some((l) => l.startsWith('--fresh: moved the previous run to'))).toBe(true)
  })

  it('an interrupted run records the attempts it stopped as stopped (never final), and a rerun resumes', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'hw-local-'))
    // The pause comes from the runner's environment (pass_env), so both runs share one manifest.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion in the command template
    const file = manifest('sleep "${HW_TEST_PAUSE:-0}"', 1, ['HW_TEST_PAUSE'])
    const controller = new AbortController()
    const env = { ...process.env, HW_TEST_PAUSE: '30' }
    const run = runLocal({ manifestFile: file, out, log: quiet, signal: controller.signal, env })
    await new Promise((r) => setTimeout(r, 3000))
    controller.abort()
    const err = await run.catch((e) => e)
    expect((err as HwError).code).toBe('aborted')
    const recorded = (cell: string) =>
      existsSync(path.join(out, 'artifacts', `hw-local-guards-${cell}-0`, 'attempts.jsonl'))
        ? attempts(out, cell)
        : []
    const stopped = [...recorded('a'), ...recorded('b')]
    // Both legs were in their first attempt (30 s pause) when stopped.
    expect(stopped.map((a) => [a.final, a.exit.class, a.exit.reason])).toEqual([
      [false, 'infra', 'stopped: the run was interrupted'],
      [false, 'infra', 'stopped: the run was interrupted'],
    ])
    const r = await runLocal({ manifestFile: file, out, log: quiet })
    expect(r.rounds[0]?.legs.map((l) => l.status)).toEqual(['complete', 'complete'])
    for (const cell of ['a', 'b']) {
      const all = attempts(out, cell)
      expect(all.filter((a) => a.final).map((a) => a.exit.class)).toEqual(['clean', 'clean'])
      expect(all.filter((a) => !a.final)).toHaveLength(1)
    }
    const report = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(report).toMatch(
      /\| Isolation \| `(namespace\+uid|env-only)` \(2 legs, canary (passed|exposed)\) \|/,
    )
  }, 90_000)
})

describe('harness-watch local: harness installs', () => {
  it('says a cached harness is cached (no install time) and a command cell has nothing to install', async () => {
    const cacheDir = await mkdtemp(path.join(tmpdir(), 'hw-cache '))
    const pkg = '@mariozechner/pi-coding-agent'
    const root = installDir(cacheDir, pkg, '0.73.1')
    const bin = path.join(root, 'node_modules', '@mariozechner', 'pi-coding-agent', 'dist', 'cli.js')
    mkdirSync(path.dirname(bin), { recursive: true })
    writeFileSync(bin, '')
    const marker = {
      package: pkg,
      version: '0.73.1',
      installed_at: '2026-01-01T00:00:00.000Z',
      seconds: 41.2,
      bytes: 1,
      bin,
    }
    writeFileSync(path.join(root, MARKER), JSON.stringify(marker))
    const loaded = await loadManifest(
      writeManifest({
        ...JSON.parse(JSON.stringify(baseManifest())),
        cells: [
          { id: 'a', harness: 'pi', version: '0.73.1' },
          { id: 'b', harness: 'command', version: '1.0.0', config: { command: 'true' } },
        ],
      }),
    )
    const lines: string[] = []
    await installAll(loaded, cacheDir, (l) => lines.push(l))
    expect(lines).toEqual([
      `pi@0.73.1 cached at ${JSON.stringify(root)}`,
      'command@1.0.0: nothing to install',
    ])
  })
})
