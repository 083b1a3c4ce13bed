import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { loadManifest } from '../../src/manifest/load.js'
import { shortRunInstances } from '../../src/pipeline/local.js'
import { AttemptRecordSchema } from '../../src/records/attempt.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { HwError } from '../../src/util/errors.js'
import { captureOutput } from '../support/capture.js'
import { containerEnv } from '../support/container.js'

// Every shipped manifest that can run offline (a scripted model route) is run as shipped by a short
// `harness-watch local --limit 1`: real harness CLIs from npm, the recording proxy, the task's verifier.
// The others need a provider's key and are named here with the reason, so a new manifest is never left
// out silently.
const NEEDS_A_PROVIDER: Record<string, string> = {
  'manifests/p0-swebench-verified.yml': 'OpenAI route through LiteLLM, Harbor-generated panel',
  'examples/manifests/pr-canary.yml': 'OpenAI route (the caller repository’s own key)',
  'examples/manifests/swebench-official-harness.yml': 'OpenAI route through LiteLLM',
}

const shipped = [
  ...readdirSync('manifests')
    .filter((f) => f.endsWith('.yml'))
    .map((f) => `manifests/${f}`),
  ...readdirSync('examples/manifests')
    .filter((f) => f.endsWith('.yml'))
    .map((f) => `examples/manifests/${f}`),
].sort()

const offline: { file: string; container: boolean }[] = []
for (const file of shipped) {
  const text = readFileSync(file, 'utf8')
  if (!/^\s+provider: scripted$/m.test(text)) continue
  offline.push({ file, container: /^\s+backend: container$/m.test(text) })
}

const io = captureOutput()
const ctr = await containerEnv()
if (ctr.reason) console.warn(`shipped container manifests skipped: ${ctr.reason}`)

describe('a short local run: --limit and --instances', () => {
  it('keeps the first n of the panel in its order, or the named instances, and refuses both or nonsense', () => {
    const panel = ['c', 'a', 'b']
    expect(shortRunInstances(panel, {})).toBeUndefined()
    expect(shortRunInstances(panel, { limit: 2 })).toEqual(['c', 'a'])
    expect(shortRunInstances(panel, { limit: 9 })).toEqual(['c', 'a', 'b'])
    expect(shortRunInstances(panel, { instances: ['b', 'b'] })).toEqual(['b'])
    for (const bad of [{ limit: 0 }, { limit: 1.5 }, { instances: [] }, { instances: ['a'], limit: 1 }]) {
      expect(() => shortRunInstances(panel, bad)).toThrow(HwError)
    }
  })

  it('names an instance not in the panel before anything runs, without a stack trace', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'hw-short-'))
    expect(await main(['local', 'manifests/demo.yml', '--out', out, '--instances', 'no-such-task'])).toBe(2)
    expect(io.err).toContain('instances not in the panel: no-such-task')
    expect(io.err).not.toMatch(/\n\s+at /)
    expect(existsSync(path.join(out, 'artifacts'))).toBe(false)
  })
})

describe('every offline shipped manifest runs as shipped (local --limit 1)', () => {
  it('lists each shipped manifest as offline or as needing a provider', () => {
    const other = shipped.filter((f) => !offline.some((o) => o.file === f))
    expect(other).toEqual(Object.keys(NEEDS_A_PROVIDER).sort())
    expect(offline.map((o) => o.file)).toEqual(
      expect.arrayContaining(['manifests/demo.yml', 'manifests/bridge-demo.yml', 'manifests/local-all.yml']),
    )
  })

  for (const { file, container } of offline) {
    it.skipIf(container && ctr.runtime === null)(`${file}`, { timeout: 1_200_000 }, async () => {
      const loaded = await loadManifest(file, { runnable: true })
      const m = loaded.manifest
      const out = await mkdtemp(path.join(tmpdir(), 'hw-shipped-'))
      const code = await main(['local', file, '--out', out, '--limit', '1', '--no-confirm'])
      expect(code, io.err.slice(-3000)).toBe(0)
      expect(io.err).toMatch(/plan: \d+ legs .*, 1 instances × 1 trial\(s\)/)

      const comparison = ComparisonSchema.parse(
        JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8')),
      )
      expect(comparison.blocks.planned).toBe(1)
      expect(comparison.blocks.complete).toBe(1)
      expect(comparison.missing_legs).toEqual([])
      expect(comparison.comparisons).toHaveLength(m.cells.length - 1)
      expect(existsSync(path.join(out, 'report.md'))).toBe(true)
      expect(existsSync(path.join(out, 'report.html'))).toBe(true)

      // Each cell made one attempt, graded by the task's verifier (never an infrastructure failure),
      // and its inference was measured at the proxy.
      const dirs = readdirSync(path.join(out, 'artifacts'))
      expect(dirs).toHaveLength(m.cells.length)
      for (const d of dirs) {
        const attempts = readFileSync(path.join(out, 'artifacts', d, 'attempts.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => AttemptRecordSchema.parse(JSON.parse(l)))
          .filter((a) => a.final)
        expect(attempts, d).toHaveLength(1)
        const [a] = attempts
        expect(
          ['resolved', 'unresolved'],
          `${d}: ${a?.outcome} ${a?.exit.class} ${a?.exit.reason}`,
        ).toContain(a?.outcome)
        expect(a?.telemetry.rows ?? 0, d).toBeGreaterThan(0)
      }
    })
  }
})
