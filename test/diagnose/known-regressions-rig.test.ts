import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runAnalyst } from '../../src/diagnose/analyst.js'
import type { Dossier } from '../../src/diagnose/schema.js'
import { defaultCacheDir } from '../../src/harnesses/install.js'
import { piAdapter } from '../../src/harnesses/pi.js'
import { scriptedAnalyst } from '../../src/model/analyst-script.js'
import { diagnoseRun } from '../../src/pipeline/diagnose.js'
import { runLocal } from '../../src/pipeline/local.js'
import { writeManifest } from '../support/manifests.js'

// Known changes injected into one cell of a small local run (real child processes, the real recording
// proxy and scripted model): cell `nocache` gets caching disabled at the model (model.scripted.cells),
// cell `extratool` offers one redundant tool schema more on every request; otherwise the three cells
// send the same three requests per attempt. The dossier's measures and the analyst must point to each.
const SYSTEM = `S=$(printf 'repeat the cached system prompt %.0s' $(seq 400))`
const tools = (n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `{"type":"function","function":{"name":"tool${i}","description":"tool ${i}","parameters":{"type":"object","properties":{} } } }`,
  ).join(',')
const cell = (n: number) =>
  `${SYSTEM}; for i in 1 2 3; do echo '{"tool":"bash","args":{"command":"curl chat/completions"} }'; ` +
  `curl -s -o /dev/null -H "authorization: Bearer $HW_API_KEY" -H 'content-type: application/json' ` +
  `-d '{"model":"gpt-5-mini","messages":[{"role":"system","content":"'"$S"'"},{"role":"user","content":"hi"}],"tools":[${tools(n)}]}' ` +
  `"$HW_OPENAI_BASE_URL/chat/completions"; done; echo done`

function attemptsOf(d: Dossier, treatment: string) {
  const c = d.comparisons.find((x) => x.treatment === treatment)!
  const inst = c.instances[0]!
  return { c, a: d.attempts[inst.baseline[0]!]!, b: d.attempts[inst.treatment[0]!]! }
}

describe('known regressions injected through the rig point the dossier and the analyst to each', () => {
  it('caching disabled at the model → cache-read share 0; an extra tool schema → one tool more', {
    timeout: 240_000,
  }, async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'hw-known-rig-'))
    const manifest = writeManifest({
      schema_version: 1,
      experiment: { id: 'known-rig' },
      model: {
        id: 'gpt-5-mini',
        provider: 'scripted',
        api: 'chat',
        prices: { input: 1, output: 2, cache_read: 0.1 },
        scripted: { cells: { nocache: { caching: false } } },
      },
      benchmark: { family: 'builtin', revision: 'core-v1', verifier: { timeout_s: 60 } },
      panel: { source: 'builtin', name: 'core', instances: ['js-fix-slugify', 'py-fix-mutable-default'] },
      cells: [
        { id: 'a', harness: 'command', version: '1.0.0', config: { command: cell(7) } },
        { id: 'nocache', harness: 'command', version: '1.0.0', config: { command: cell(7) } },
        { id: 'extratool', harness: 'command', version: '1.0.0', config: { command: cell(8) } },
      ],
      baseline: 'a',
      budgets: { timeout_s: 60 },
      concurrency: 1,
      confirmation: { enabled: false },
      reporting: { bootstrap_resamples: 200 },
    })
    await runLocal({ manifestFile: manifest, out, log: () => {} })
    const r = await diagnoseRun({ dir: out })
    const d = r.dossier

    const cache = attemptsOf(d, 'nocache')
    expect(cache.b.measures.requests.count).toBe(3)
    expect(cache.a.measures.requests.count).toBe(3)
    expect(cache.b.measures.requests.cache_read_share).toBe(0)
    expect(cache.a.measures.requests.cache_read_share).toBeGreaterThan(0.5)
    expect(cache.b.measures.requests.max_tools).toBe(cache.a.measures.requests.max_tools)

    const tool = attemptsOf(d, 'extratool')
    expect([tool.a.measures.requests.max_tools, tool.b.measures.requests.max_tools]).toEqual([7, 8])
    expect(tool.b.measures.requests.cache_read_share).toBeGreaterThan(0.5)

    const ask = async (c: Dossier['comparisons'][number]) =>
      (
        await runAnalyst({
          dossier: { ...d, comparisons: [c] },
          dir: path.dirname(r.dossierJson),
          report: '',
          port: scriptedAnalyst,
        })
      ).answer
    const onCache = await ask(cache.c)
    expect(onCache?.category).toBe('caching')
    expect(onCache?.hypothesis).toContain('nocache reads a cache share of 0 of its input')
    const onTool = await ask(tool.c)
    expect(onTool?.category).toBe('tool_schema')
    expect(onTool?.hypothesis).toContain('extratool offers 8 tool schemas per request where a offers 7')
  })

  it('an instruction that causes repeated reads (real Pi cells) → repeated reads of unchanged output', {
    timeout: 240_000,
  }, async (t) => {
    try {
      await piAdapter.install('0.73.1', { cacheDir: defaultCacheDir(), log: () => {} })
    } catch (e) {
      return t.skip(`Pi 0.73.1 cannot be installed here: ${(e as Error).message.split('\n')[0]}`)
    }
    const out = await mkdtemp(path.join(tmpdir(), 'hw-known-rig-pi-'))
    const manifest = writeManifest({
      schema_version: 1,
      experiment: { id: 'known-rig-pi' },
      model: {
        id: 'gpt-5-mini',
        provider: 'scripted',
        api: 'chat',
        prices: { input: 1, output: 2, cache_read: 0.1 },
        scripted: { success_rate: 1, cells: { rereads: { repeat_reads: 3 } } },
      },
      benchmark: { family: 'builtin', revision: 'core-v1', verifier: { timeout_s: 60 } },
      panel: { source: 'builtin', name: 'core', instances: ['js-fix-slugify'] },
      cells: [
        { id: 'a', harness: 'pi', version: '0.73.1' },
        { id: 'rereads', harness: 'pi', version: '0.73.1' },
      ],
      baseline: 'a',
      budgets: { timeout_s: 120 },
      concurrency: 1,
      confirmation: { enabled: false },
      sandbox: { backend: 'auto', allow_unisolated: true },
      reporting: { bootstrap_resamples: 200 },
    })
    await runLocal({ manifestFile: manifest, out, log: () => {} })
    const r = await diagnoseRun({ dir: out })
    const { c, a, b } = attemptsOf(r.dossier, 'rereads')
    expect(a.measures.repeats.repeated_reads).toBe(0)
    expect(b.measures.repeats.repeated_reads).toBe(3)
    expect(b.measures.requests.count).toBe((a.measures.requests.count ?? 0) + 3)
    const p = await runAnalyst({
      dossier: { ...r.dossier, comparisons: [c] },
      dir: path.dirname(r.dossierJson),
      report: '',
      port: scriptedAnalyst,
    })
    expect(p.grounding.status).toBe('grounded')
    expect(p.answer?.category).toBe('prompt_or_instructions')
    expect(p.answer?.hypothesis).toContain('(3 repeated reads with unchanged output)')
  })
})
