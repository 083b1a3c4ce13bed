import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runLocal } from '../../src/pipeline/local.js'
import { writeManifest } from '../support/manifests.js'

// The local pipeline with two command cells (real child processes, real proxy and scripted model):
// cell b sends four model requests where a sends one, so the request ratio breaches on the first run
// and holds on the rerun; the confirmed breach gets its dossier and a grounded scripted proposal.
// Each request is announced as a JSON event line (what a command cell's program prints is its
// trajectory; `} }` keeps the braces apart from the command template's `}}`).
const call = (n: number) =>
  `for i in $(seq ${n}); do echo '{"tool":"bash","args":{"command":"curl chat/completions"} }'; curl -s -o /dev/null -H "authorization: Bearer $HW_API_KEY" -H 'content-type: application/json' ` +
  `-d '{"model":"gpt-5-mini","messages":[{"role":"user","content":"hi"}]}' "$HW_OPENAI_BASE_URL/chat/completions"; done; echo done`

describe('local: a confirmed breach is diagnosed', () => {
  it('writes diagnosis/dossier.json, dossier.md and proposal.json beside the final report', {
    timeout: 300_000,
  }, async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'hw-diag-local-'))
    const manifest = writeManifest({
      schema_version: 1,
      experiment: { id: 'diag-local' },
      model: { id: 'gpt-5-mini', provider: 'scripted', api: 'chat', prices: { input: 1, output: 2 } },
      benchmark: { family: 'builtin', revision: 'core-v1', verifier: { timeout_s: 60 } },
      panel: {
        source: 'builtin',
        name: 'core',
        instances: [
          'js-fix-slugify',
          'js-fix-paginate',
          'js-fix-csv-quotes',
          'py-fix-mutable-default',
          'py-fix-word-wrap',
          'py-fix-table-width',
        ],
      },
      cells: [
        { id: 'a', harness: 'command', version: '1.0.0', config: { command: call(1) } },
        { id: 'b', harness: 'command', version: '1.0.0', config: { command: call(4) } },
      ],
      baseline: 'a',
      budgets: { timeout_s: 60 },
      concurrency: 2,
      // Six blocks: the rerun's exact one-sided test can reject at α = 0.05 (p = 1/64 when all agree).
      thresholds: { min_blocks: 6 },
      confirmation: { enabled: true, max_blocks: 6 },
      reporting: { bootstrap_resamples: 200 },
    })
    const r = await runLocal({ manifestFile: manifest, out, log: () => {} })
    expect(r.final.decision.status).toBe('confirmed')
    expect(r.diagnosis).toBe(path.join(out, 'confirm-1', 'diagnosis', 'dossier.json'))
    const dossier = JSON.parse(readFileSync(r.diagnosis!, 'utf8'))
    expect(dossier.comparisons[0].status).toBe('confirmed')
    expect(dossier.comparisons[0].instances.length).toBeGreaterThan(0)
    const inst = dossier.comparisons[0].instances[0]
    const b = dossier.attempts[inst.treatment[0]]
    const a = dossier.attempts[inst.baseline[0]]
    expect([a.measures.requests.count, b.measures.requests.count]).toEqual([1, 4])
    expect(existsSync(path.join(out, 'confirm-1', 'diagnosis', 'dossier.md'))).toBe(true)
    const proposal = JSON.parse(
      readFileSync(path.join(out, 'confirm-1', 'diagnosis', 'proposal.json'), 'utf8'),
    )
    expect(proposal.grounding).toMatchObject({ status: 'grounded', problems: [] })
    expect(proposal.analyst.route).toBe('scripted')
    expect(proposal.answer.supporting_evidence[0].event_ids[0]).toMatch(/^b\/.+#\d+$/)
    expect(readFileSync(path.join(out, 'confirm-1', 'report.html'), 'utf8')).toContain(
      'diagnosis/dossier.md#timeline-',
    )
  })
})
