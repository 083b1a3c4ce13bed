import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { fromHarborJob, harborSystems, readHarborJob } from '../../src/ingest/published/harbor.js'
import { readPublished } from '../../src/ingest/published/read.js'
import { comparePublished } from '../../src/pipeline/published.js'
import { HwError } from '../../src/util/errors.js'

// A Harbor job folder in Harbor's layout: two agents on one model, three tasks, two trials each; one
// trial raised (AgentTimeoutError), one result.json is truncated, one trial folder has none.
const JOB = path.join(import.meta.dirname, 'fixtures/harbor-job')
const CLAUDE = 'claude-code__claude-sonnet-4-5'
const CODEX = 'codex__claude-sonnet-4-5'

let tmp: string
beforeEach(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'hw-harbor-'))
})
afterEach(() => rmSync(tmp, { recursive: true, force: true }))

describe('Harbor job folders', () => {
  it('reads every trial, lists the broken folders, and maps rewards and exceptions', async () => {
    const job = await readHarborJob(JOB)
    expect(job.trials).toHaveLength(12)
    expect(job.problems.map((p) => p.folder)).toEqual(['fix-git__cl98xQz', 'sqlite-db__co99xQz'])
    expect(job.problems[0]?.problem).toMatch(/no result\.json/)
    expect(job.problems[1]?.problem).toMatch(/not valid JSON \(truncated\?\)/)
    expect(harborSystems(job)).toEqual([CLAUDE, CODEX])
    const codex = fromHarborJob(job, CODEX, `${JOB}#${CODEX}`)
    expect(codex.harness).toBe('codex')
    expect(codex.harnessVersion).toBe('0.53.0')
    expect(codex.model).toBe('claude-sonnet-4-5')
    expect(codex.instances.get('hello-world')?.trials).toEqual(['resolved', 'infra_error'])
    expect(codex.instances.get('sqlite-db')?.trials).toEqual(['resolved', 'unresolved'])
    // Costs summed per task from agent_result.cost_usd (trials 7 and 8: 0.12 + 0.13).
    expect(codex.instances.get('hello-world')?.costUsd).toBeCloseTo(0.25, 10)
    expect(codex.costSource).toBe('harness-self-reported')
    expect(codex.notes.join('\n')).toMatch(/1 trial\(s\) raised an exception.*AgentTimeoutError/)
  })

  it('compares two agents of one job: pass@k and pass^k, infra errors out of the pairing, cost labelled self-reported', async () => {
    const out = path.join(tmp, 'out')
    await comparePublished({
      baseline: `${JOB}#${CLAUDE}`,
      treatment: `${JOB}#${CODEX}`,
      out,
      resamples: 200,
    })
    const cmp = JSON.parse(readFileSync(path.join(out, 'comparison.json'), 'utf8'))
    const text = JSON.stringify(cmp)
    expect(text).not.toMatch(/NaN|Infinity/)
    const md = readFileSync(path.join(out, 'report.md'), 'utf8')
    expect(md).toMatch(/cost self-reported by the harness \(Harbor agent\\?_result\), not proxy-measured/)
    expect(md).toMatch(/fix-git\\?_\\?_cl98xQz: no result\.json/)
    expect(md).toMatch(/sqlite-db\\?_\\?_co99xQz: result\.json is not valid JSON/)
    // hello-world holds codex's infra error: an incomplete block, two complete ones remain.
    expect(md).toMatch(/`hello-world` \| incomplete/)
    expect(md).toMatch(/pass@2/)
    expect(md).toMatch(/pass\^2/)
    // Claude: hello-world 2/2, fix-git 1/2, sqlite-db 0/2 → 3 of 6, pass^2 = (1 + 0 + 0)/3; codex's
    // infra error is out of its denominator: 2 of 5.
    expect(md).toMatch(/`claude-code__claude-sonnet-4-5` \| 3\/6 \| 50\.0% \| 33\.3% \| \$0\.1700/)
    expect(md).toMatch(/`codex__claude-sonnet-4-5` \| 2\/5 \| 50\.0% \| 0\.0% \|/)
  })

  it('asks which system when the job ran several, and names them', async () => {
    const err = await readPublished(JOB).catch((e) => e)
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).code).toBe('published_system')
    expect((err as HwError).details.join(' ')).toContain(`${CLAUDE}, ${CODEX}`)
  })

  it('a job whose every result is unreadable is a located error, not an empty comparison', async () => {
    const job = path.join(tmp, 'job')
    cpSync(path.join(JOB, 'sqlite-db__co99xQz'), path.join(job, 'sqlite-db__co99xQz'), { recursive: true })
    const err = await readPublished(job).catch((e) => e)
    expect(err).toBeInstanceOf(HwError)
    expect((err as HwError).message).toMatch(/no readable trial result/)
    expect((err as HwError).details[0]).toMatch(/sqlite-db__co99xQz: result\.json is not valid JSON/)
  })

  it('a result.json with a wrong field is listed with the field; the other trials are still read', async () => {
    const job = path.join(tmp, 'job')
    cpSync(JOB, job, { recursive: true })
    const f = path.join(job, 'fix-git__co09xQz/result.json')
    const v = JSON.parse(readFileSync(f, 'utf8'))
    v.verifier_result = { rewards: { reward: 'yes' } }
    writeFileSync(f, JSON.stringify(v))
    const r = await readHarborJob(job)
    expect(r.trials).toHaveLength(11)
    const p = r.problems.find((x) => x.folder === 'fix-git__co09xQz')
    expect(p?.problem).toMatch(/verifier_result\.rewards\.reward/)
  })
})
