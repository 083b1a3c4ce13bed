import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { decisionTrials } from '../../src/compare/trial-halves.js'
import { loadManifest } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import { strictJson } from '../../src/util/json.js'
import { captureOutput } from '../support/capture.js'
import { makeComparison } from './fixtures.js'

const root = path.resolve(import.meta.dirname, '..', '..')
const io = captureOutput()

/** The workflow fixture's plan and a comparison where head loses b1–b5 (−55.6 pp). */
async function firstRun(): Promise<{ dir: string; plan: string; comparison: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hw-cli-detect-'))
  const loaded = await loadManifest(path.join(root, 'test', 'fixtures', 'workflow', 'canary.yml'))
  const plan = buildPlan(loaded, await resolvePanel(loaded.manifest, loaded.dir))
  await writeFile(path.join(dir, 'plan.json'), strictJson(plan))
  const rows = Object.fromEntries(
    plan.panel.instances.map((id) => [
      id,
      { base: { o: 'r' as const }, head: { o: id.startsWith('b') ? ('u' as const) : ('r' as const) } },
    ]),
  )
  await mkdir(path.join(dir, 'hw-out'))
  await writeFile(
    path.join(dir, 'hw-out', 'comparison.json'),
    strictJson(makeComparison({ experiment: 'canary', cells: ['base', 'head'], rows })),
  )
  return { dir, plan: path.join(dir, 'plan.json'), comparison: path.join(dir, 'hw-out', 'comparison.json') }
}

describe('harness-watch detect / confirm', () => {
  it('detect prints the verdict, each signal with its interval, and the rerun to do', async () => {
    const f = await firstRun()
    const code = await main(['detect', '--comparison', f.comparison, '--plan', f.plan])
    expect(code).toBe(0)
    expect(io.out).toMatch(/^breach \(unconfirmed\): head vs base −55\.6 pp \[/)
    expect(io.out).toMatch(
      /unconfirmed {5}head vs base: resolved −55\.6 pp \[.*\] — resolve-rate deficit ≥ 10 points/,
    )
    expect(io.out).toMatch(
      /confirmation plan: .*confirm-1\/plan\.json \(\d+ legs, 9 blocks, cells base, head\)/,
    )
    const decision = JSON.parse(await readFile(path.join(f.dir, 'hw-out', 'decision.json'), 'utf8'))
    expect(decision.status).toBe('breach')
    // A seeded random sample of up to max_blocks: the whole 9-block canary panel.
    expect(decision.affected_blocks).toHaveLength(9)
    expect(decision.affected_blocks).toEqual(expect.arrayContaining(['b1', 'b2', 'b3', 'b4', 'b5']))
  })

  it('a rerun whose decision part holds under 3 blocks says a cost signal cannot be confirmed on it', async () => {
    const f = await firstRun()
    const plan = JSON.parse(await readFile(f.plan, 'utf8'))
    const rows = Object.fromEntries(
      plan.panel.instances.map((id: string, i: number) => [
        id,
        { base: { o: 'r' as const, spend: 1 + i / 10 }, head: { o: 'r' as const, spend: 3 + i / 5 } },
      ]),
    )
    await writeFile(
      f.comparison,
      strictJson(makeComparison({ experiment: 'canary', cells: ['base', 'head'], rows })),
    )
    const decide = async (confirmation: Record<string, number>) => {
      const p = structuredClone(plan)
      p.manifest.confirmation = { ...p.manifest.confirmation, ...confirmation }
      const file = path.join(f.dir, 'small-plan.json')
      await writeFile(file, strictJson(p))
      expect(await main(['detect', '--comparison', f.comparison, '--plan', file])).toBe(0)
      return JSON.parse(await readFile(path.join(f.dir, 'hw-out', 'decision.json'), 'utf8'))
    }
    // Four rerun trials (the default): every sampled block decides on half of its trials.
    const split = await decide({ max_blocks: 2 })
    expect(split.signals.map((s: { metric: string }) => s.metric)).toContain('spend_usd')
    expect(split.confirmation.sample).toHaveLength(2)
    expect(split.confirmation.estimate).toEqual([])
    expect(split.notes).toContain(
      "the rerun's decision trials cover 2 block(s): a cost signal needs at least 3 to be confirmed; raise confirmation.max_blocks to 3 or more",
    )
    expect((await decide({ max_blocks: 4 })).notes.join('\n')).not.toContain('cover')
    // One rerun trial: no trial can be held out, so the blocks are split and half of them decide.
    const one = await decide({ max_blocks: 4, trials: 1 })
    expect(one.confirmation.sample).toHaveLength(4)
    expect(one.confirmation.estimate).toHaveLength(2)
    expect(one.notes).toContain(
      "the rerun's decision half holds 2 block(s): a cost signal needs at least 3 to be confirmed; raise confirmation.max_blocks to 6 or more",
    )
    expect(one.notes.join('\n')).toContain(
      'confirmation.trials is 1: no rerun trial can be held out of the decision',
    )
    // With the default max_blocks the note is absent.
    expect(await main(['detect', '--comparison', f.comparison, '--plan', f.plan])).toBe(0)
    const again = JSON.parse(await readFile(path.join(f.dir, 'hw-out', 'decision.json'), 'utf8'))
    expect(again.notes.join('\n')).not.toMatch(/decision (half holds|trials cover)/)
  })

  it('detect --json prints the step outputs', async () => {
    const f = await firstRun()
    expect(await main(['detect', '--comparison', f.comparison, '--plan', f.plan, '--json'])).toBe(0)
    const o = JSON.parse(io.out)
    expect(o).toMatchObject({ status: 'breach', breach: 'true', confirmed: 'false' })
    expect(JSON.parse(o['confirm-matrix']).include.map((e: { cell: string }) => e.cell)).toEqual(
      expect.arrayContaining(['base', 'head']),
    )
  })

  it('detect with a plan of another experiment or round names both, exit 2, and writes nothing', async () => {
    const f = await firstRun()
    const plan = JSON.parse(await readFile(f.plan, 'utf8'))
    const other = path.join(f.dir, 'other-plan.json')
    await writeFile(other, strictJson({ ...plan, experiment_id: 'another-experiment' }))
    expect(await main(['detect', '--comparison', f.comparison, '--plan', other])).toBe(2)
    const sha = `${plan.manifest_sha256.slice(0, 12)}…`
    expect(io.err).toContain(`error: ${other} plan.json and comparison.json belong to different experiments`)
    expect(io.err).toContain(`plan:       experiment another-experiment, manifest sha256 ${sha} (${other})`)
    expect(io.err).toContain(`comparison: experiment canary, manifest sha256 none (${f.comparison})`)
    expect(io.err).not.toMatch(/--cells/)
    await expect(readFile(path.join(f.dir, 'hw-out', 'decision.json'))).rejects.toThrow()

    io.err = ''
    const round1 = path.join(f.dir, 'round1-plan.json')
    await writeFile(round1, strictJson({ ...plan, round: 1 }))
    expect(await main(['detect', '--comparison', f.comparison, '--plan', round1])).toBe(2)
    expect(io.err).toContain('plan.json is round 1 (plan) of experiment canary, comparison.json round 0')

    io.err = ''
    const c = JSON.parse(await readFile(f.comparison, 'utf8'))
    const edited = path.join(f.dir, 'edited-comparison.json')
    await writeFile(edited, strictJson({ ...c, stamp: { ...c.stamp, manifest_sha256: 'f'.repeat(64) } }))
    expect(await main(['detect', '--comparison', edited, '--plan', f.plan])).toBe(2)
    expect(io.err).toContain(
      'plan.json and comparison.json are of experiment canary but of different manifest versions',
    )
    expect(io.err).toContain(`comparison: manifest sha256 ffffffffffff… (${edited})`)
  })

  it('confirm decides the rerun; on a first-run plan it is a usage error (exit 2)', async () => {
    const f = await firstRun()
    // One rerun trial per block: the sample is split into a decision half and an estimation half.
    const plan = JSON.parse(await readFile(f.plan, 'utf8'))
    plan.manifest.confirmation = { ...plan.manifest.confirmation, trials: 1 }
    await writeFile(f.plan, strictJson(plan))
    await main(['detect', '--comparison', f.comparison, '--plan', f.plan])
    const cplan = path.join(f.dir, 'hw-out', 'confirm-1', 'plan.json')
    const affected: string[] = JSON.parse(
      await readFile(path.join(f.dir, 'hw-out', 'decision.json'), 'utf8'),
    ).affected_blocks
    // The rerun's data decides: head loses the blocks `lost` on the rerun, wins none.
    const rerunWith = async (name: string, lost: (id: string) => boolean) => {
      const rerun = makeComparison({
        experiment: 'canary',
        round: 1,
        cells: ['base', 'head'],
        rows: Object.fromEntries(
          affected.map((id) => [
            id,
            { base: { o: 'r' as const }, head: { o: lost(id) ? ('u' as const) : ('r' as const) } },
          ]),
        ),
      })
      const rdir = path.join(f.dir, name)
      await mkdir(rdir)
      await writeFile(path.join(rdir, 'comparison.json'), strictJson(rerun))
      return path.join(rdir, 'comparison.json')
    }
    const rdir = path.dirname(await rerunWith('rerun', (id) => id.startsWith('b')))
    io.out = ''
    expect(await main(['confirm', '--comparison', path.join(rdir, 'comparison.json'), '--plan', cplan])).toBe(
      0,
    )
    // Five losses again on the rerun of the 9-block panel: the first run (p = 1/32) and the rerun's
    // decision half (3 losses of 5: p = 1/8) combined by inverse normal: p = 0.0166 ≤ α = 0.05; the
    // figure shown is the estimation half's (4 blocks, 2 losses).
    expect(io.out).toMatch(
      /^confirmed regression: head vs base −55\.6 pp \[.*\] resolved on the first run \(n = 9\); two-stage test of the resolve-rate difference treatment − baseline \(points\): combined p = 0\.0166 ≤ α 0\.05 \(first run n = 9, p = 0\.0313; rerun decision half n = 5, p = 0\.125\); figure shown, estimation half of the rerun \(n = 4\), not used by the decision: −50\.0 pp/,
    )
    // Only two of them lost on a rerun (one in the decision half): combined p = 0.0939 > α, cleared.
    const cleared = await rerunWith('rerun-2', (id) => id === 'b1' || id === 'b2')
    io.out = ''
    expect(await main(['confirm', '--comparison', cleared, '--plan', cplan])).toBe(0)
    expect(io.out).toMatch(
      /^cleared: the breach did not hold on the rerun: head vs base −55\.6 pp \[.*\] resolved on the first run \(n = 9\); two-stage test of the resolve-rate difference treatment − baseline \(points\): combined p = 0\.0939 > α 0\.05 \(first run n = 9, p = 0\.0313; rerun decision half n = 5, p = 0\.500\)/,
    )
    expect(io.out).toMatch(
      /cleared {9}head vs base: resolved .*: first run b = 5, c = 0 \(p = 0\.0313\); rerun decision half b′ = 1, c′ = 0 \(p = 0\.500\); combined p = 0\.0939 > α = 0\.05: did not hold/,
    )

    expect(
      await main(['confirm', '--comparison', path.join(rdir, 'comparison.json'), '--plan', f.plan]),
    ).toBe(2)
    expect(io.err).toMatch(/is not a confirmation plan/)
  })

  it('confirm with rerun trials split: decides on the decision trials, shows the held-out trial’s figure; forged halves decide nothing', async () => {
    const f = await firstRun()
    await main(['detect', '--comparison', f.comparison, '--plan', f.plan])
    const cplan = path.join(f.dir, 'hw-out', 'confirm-1', 'plan.json')
    const first = JSON.parse(await readFile(path.join(f.dir, 'hw-out', 'decision.json'), 'utf8'))
    expect(first.confirmation.estimate).toEqual([])
    const planned: string[] = first.confirmation.instances
    const seed: number = first.confirmation.seed
    const drawn = decisionTrials(planned, 4, seed)
    // Four trials per block: head loses every decision trial of the b blocks; `heldWins` decides which
    // b blocks head resolves on its held-out trial. base resolves everything.
    const rerunWith = (heldWins: (id: string) => boolean) => {
      const part = (which: 'decision' | 'estimate' | 'whole') =>
        makeComparison({
          experiment: 'canary',
          round: 1,
          cells: ['base', 'head'],
          rows: Object.fromEntries(
            planned.map((id) => {
              const trials = which === 'decision' ? 3 : which === 'estimate' ? 1 : 4
              const lose = id.startsWith('b')
              const dWins = lose ? 0 : 3
              const eWins = lose ? (heldWins(id) ? 1 : 0) : 1
              const wins = which === 'decision' ? dWins : which === 'estimate' ? eWins : dWins + eWins
              return [
                id,
                {
                  base: { o: 'r' as const, trials, resolved_trials: trials },
                  head: { o: wins > 0 ? ('r' as const) : ('u' as const), trials, resolved_trials: wins },
                },
              ]
            }),
          ),
        })
      return {
        ...part('whole'),
        trial_halves: {
          seed,
          trials: { decision: 3, estimate: 1 },
          decision_trials: Object.fromEntries(drawn),
          decision: part('decision').instances,
          estimate: part('estimate').instances,
        },
      }
    }
    const rdir = path.join(f.dir, 'rerun-split')
    await mkdir(rdir)
    const file = path.join(rdir, 'comparison.json')
    const confirmOn = async (rerun: unknown) => {
      await writeFile(file, strictJson(rerun))
      io.out = ''
      expect(await main(['confirm', '--comparison', file, '--plan', cplan])).toBe(0)
      return io.out
    }
    // Decision trials: five losses of 9 blocks (p = 1/32), combined with the first run's 1/32:
    // p = 0.00422; the figure shown: head loses only b1 on its held-out trial, −11.1 points.
    const onlyB1 = rerunWith((id) => id !== 'b1')
    expect(await confirmOn(onlyB1)).toMatch(
      /^confirmed regression: .*combined p = 0\.00422 ≤ α 0\.05 \(first run n = 9, p = 0\.0313; rerun decision trials n = 9, p = 0\.0313\); figure shown, estimation trials of the rerun \(1 of each block's 4 trials, n = 9 sampled blocks\), not used by the decision: −11\.1 pp/,
    )
    // The held-out trials never sway the decision. Winning every one of them leaves each b block
    // mixed over its four trials (an unstable instance when read on the whole rerun, which would
    // have excused the losses); losing every one gives the same combined p as well.
    expect(await confirmOn(rerunWith(() => true))).toMatch(
      /^confirmed regression: .*combined p = 0\.00422 ≤ α 0\.05 .*not used by the decision: ±0\.0 pp/,
    )
    expect(await confirmOn(rerunWith(() => false))).toMatch(
      /^confirmed regression: .*combined p = 0\.00422 ≤ α 0\.05 .*not used by the decision: −55\.6 pp/,
    )
    // Forged halves decide nothing: another seed, parts that do not add up to the rows, none at all.
    const inconclusive = /^inconclusive: /
    const otherSeed = { ...onlyB1, trial_halves: { ...onlyB1.trial_halves, seed: seed + 1 } }
    expect(await confirmOn(otherSeed)).toMatch(inconclusive)
    expect(io.out).toContain(
      `the rerun's trial halves name seed ${seed + 1}, the confirmation plan's is ${seed}`,
    )
    const contradicting = {
      ...onlyB1,
      trial_halves: { ...onlyB1.trial_halves, estimate: onlyB1.trial_halves.decision },
    }
    expect(await confirmOn(contradicting)).toMatch(inconclusive)
    expect(io.out).toMatch(
      /the rerun's trial halves do not add up for \S+, cell \w+: 3 \+ 3 trials, the row 4/,
    )
    const { trial_halves: _dropped, ...plain } = onlyB1
    expect(await confirmOn(plain)).toMatch(inconclusive)
    expect(io.out).toContain('are absent although it ran 4 trials per block')
  })

  it('publish without a token is a usage error that says what to set', async () => {
    const f = await firstRun()
    const saved = { t: process.env.GITHUB_TOKEN, g: process.env.GH_TOKEN }
    delete process.env.GITHUB_TOKEN
    delete process.env.GH_TOKEN
    try {
      expect(await main(['publish', '--comparison', f.comparison])).toBe(2)
      expect(io.err).toMatch(/no GitHub token: set GITHUB_TOKEN/)
    } finally {
      if (saved.t !== undefined) process.env.GITHUB_TOKEN = saved.t
      if (saved.g !== undefined) process.env.GH_TOKEN = saved.g
    }
  })
})
