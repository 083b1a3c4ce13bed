import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runLocal } from '../../src/pipeline/local.js'
import { ComparisonSchema } from '../../src/records/comparison.js'
import { writeManifest } from '../support/manifests.js'

// `local` on two scripted models (two routes, two recording proxies, offline) with two command
// harnesses whose ranking reverses: alpha solves tasks 1–13 on glm-4.6 and 1–3 on the other model;
// beta the opposite. Each attempt sends one request through its own route's proxy and learns its model
// from HW_MODEL, so a cell given the wrong route would solve the wrong tasks.
const N = 16
const request =
  'curl -s -o /dev/null -H "authorization: Bearer $HW_API_KEY" -H \'content-type: application/json\' ' +
  '-d "{\\"model\\":\\"$HW_MODEL\\",\\"messages\\":[{\\"role\\":\\"user\\",\\"content\\":\\"hi\\"}]}" "$HW_OPENAI_BASE_URL/chat/completions"'
const agent = (onGlm: number, elsewhere: number) =>
  `${request}; n=$(grep -o 'N:[0-9]*' "$HW_PROMPT_FILE" | cut -d: -f2); ` +
  `case "$HW_MODEL" in glm-4.6) lim=${onGlm};; *) lim=${elsewhere};; esac; ` +
  `if [ "$n" -le "$lim" ]; then echo ok > answer.txt; fi; echo done`

function tasks(): string {
  const root = path.join(tmpdir(), `hw-models-tasks-${process.pid}-${Date.now()}`)
  for (let i = 1; i <= N; i++) {
    const dir = path.join(root, `task-${String(i).padStart(2, '0')}`)
    mkdirSync(path.join(dir, 'environment'), { recursive: true })
    mkdirSync(path.join(dir, 'tests'), { recursive: true })
    writeFileSync(path.join(dir, 'instruction.md'), `Write ok into answer.txt. N:${i}\n`)
    writeFileSync(path.join(dir, 'task.toml'), 'version = "1.0"\n[verifier]\ntimeout_sec = 30\n')
    writeFileSync(path.join(dir, 'environment', 'README.md'), 'empty\n')
    writeFileSync(
      path.join(dir, 'tests', 'test.sh'),
      '#!/usr/bin/env bash\n[ "$(cat answer.txt 2>/dev/null)" = ok ]\n',
    )
  }
  return root
}

describe('local: two models, a harness ranking that reverses', () => {
  it('pairs within each model and reports the reversal as a harness × model interaction', {
    timeout: 600_000,
  }, async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'hw-local-models-'))
    const scripted = (id: string) => ({
      id,
      provider: 'scripted',
      api: 'chat',
      prices: { input: 1, output: 2 },
    })
    const manifest = writeManifest({
      schema_version: 1,
      experiment: { id: 'two-models' },
      models: { glm: scripted('glm-4.6'), sonnet: scripted('claude-sonnet-4-5') },
      benchmark: { family: 'harbor', revision: 'fixture-1', verifier: { timeout_s: 60 } },
      panel: { source: 'tasks', path: tasks() },
      cells: [
        {
          id: 'alpha-glm',
          harness: 'command',
          version: '1.0.0',
          model: 'glm',
          config: { command: agent(13, 3) },
        },
        {
          id: 'beta-glm',
          harness: 'command',
          version: '1.0.0',
          model: 'glm',
          config: { command: agent(3, 13) },
        },
        {
          id: 'alpha-son',
          harness: 'command',
          version: '1.0.0',
          model: 'sonnet',
          config: { command: agent(13, 3) },
        },
        {
          id: 'beta-son',
          harness: 'command',
          version: '1.0.0',
          model: 'sonnet',
          config: { command: agent(3, 13) },
        },
      ],
      baseline: 'alpha-glm',
      budgets: { timeout_s: 60 },
      concurrency: 4,
      confirmation: { enabled: false, max_blocks: 2 },
      reporting: { bootstrap_resamples: 1000 },
      sandbox: { allow_unisolated: true },
    })
    const r = await runLocal({ manifestFile: manifest, out, log: () => {} })
    expect(r.rounds[0]?.legs.map((l) => [l.cell_id, l.model, l.status])).toEqual([
      ['alpha-glm', 'glm-4.6', 'complete'],
      ['beta-glm', 'glm-4.6', 'complete'],
      ['alpha-son', 'claude-sonnet-4-5', 'complete'],
      ['beta-son', 'claude-sonnet-4-5', 'complete'],
    ])
    // Each attempt ran on its cell's route: its record and its proxy rows name that model.
    const artifact = (cell: string) => path.join(out, 'artifacts', `hw-two-models-${cell}-0`)
    const lines = (file: string) =>
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    for (const [cell, model] of [
      ['beta-glm', 'glm-4.6'],
      ['alpha-son', 'claude-sonnet-4-5'],
    ] as const) {
      const atts = lines(path.join(artifact(cell), 'attempts.jsonl'))
      expect(atts).toHaveLength(N)
      expect(new Set(atts.map((a: { model: string }) => a.model))).toEqual(new Set([model]))
      const rows = lines(path.join(artifact(cell), 'ledger.jsonl'))
      expect(rows).toHaveLength(N)
      expect(new Set(rows.map((row: { model: string }) => row.model))).toEqual(new Set([model]))
    }

    const c = ComparisonSchema.parse(JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8')))
    expect(
      c.comparisons.map((e) => [e.model, e.baseline, e.treatment, e.outcome.n, e.outcome.diff_pp]),
    ).toEqual([
      ['glm', 'alpha-glm', 'beta-glm', N, -62.5],
      ['sonnet', 'alpha-son', 'beta-son', N, 62.5],
    ])
    const ix = c.models!.interactions[0]!
    // D = −2 on tasks 4–13 (ten blocks), 0 elsewhere: Î = −20/16, exact p = 2/2^10.
    expect(ix).toMatchObject({
      model_a: 'glm',
      model_b: 'sonnet',
      n: N,
      gap_a_pp: -62.5,
      gap_b_pp: 62.5,
      estimate_pp: -125,
      p: 2 / 1024,
      reverses: true,
    })
    const fam = c.multiplicity!
    const adjusted = fam.tests.find((t) => t.id === 'interaction')!
    expect(adjusted.p_adjusted).toBeLessThanOrEqual(0.05)
    expect(adjusted.reject).toBe(true)
    const md = readFileSync(path.join(out, 'report.md'), 'utf8').replaceAll('\u200d', '')
    expect(md).toContain('## Harness × model')
    expect(md).toContain('| glm | alpha-glm → beta-glm | 81.3% | 18.8% | −62.5 pp \\[')
    expect(md).toContain('| sonnet | alpha-son → beta-son | 18.8% | 81.3% | +62.5 pp \\[')
    expect(md).toMatch(
      /\| command@1\.0\.0 vs command@1\.0\.0 \| glm \/ sonnet \| 16 \| −62\.5 pp \| \+62\.5 pp \| −125\.0 pp \\\[[^|]+\| 0\.00195 \| [^|]+ \| the ranking reverses between the models \|/,
    )
    expect(md).toContain(fam.statement)
  })
})
