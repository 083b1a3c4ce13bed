/**
 * Fuzz test of the CLI's readers: seeded mutations (pure-rand) of the project's own fixture
 * manifests, leg artifacts, plan.json and published result files, each fed through the command that
 * reads it. Every case must end with an expected exit status, a message that names a place and no
 * stack trace, strict JSON outputs (no NaN or Infinity), and every row of a mutated attempts.jsonl
 * either counted or listed as an input error. `npm run test:fuzz` runs many more cases
 * (HW_FUZZ_CASES; 200 in the default run).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { main } from '../../src/cli/index.js'
import type { Plan } from '../../src/plan/schema.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts, writePlan } from '../compare/fixtures.js'
import { captureOutput } from '../support/capture.js'
import { baseManifest } from '../support/manifests.js'
import { Mutator } from './mutate.js'

const TOTAL = Number(process.env.HW_FUZZ_CASES ?? 200)
const SEED = Number(process.env.HW_FUZZ_SEED ?? 20261201)
const share = (f: number) => Math.max(1, Math.round(TOTAL * f))
/** Time allowed for `n` cases of a kind (the default run takes a fraction of it). */
const budget = (n: number) => Math.max(60_000, n * 600)

const io = captureOutput()
const tmp = () => mkdtempSync(path.join(tmpdir(), 'hw-fuzz-'))

/** What every failed case must show: a located, printable message and no stack trace. */
function checkMessage(code: number, label: string): void {
  const err = io.err
  const where = `${label}\n--- stderr ---\n${err.slice(0, 2000)}`
  expect(err, where).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/)
  expect(err, where).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u200b]/)
  for (const line of err.split('\n')) expect(line.length, where).toBeLessThanOrEqual(2_000)
  if (code !== 0) {
    expect(err, where).toMatch(/^(error|aggregation failed|warning):? /m)
    // A place: a file with a line (and column), or a named file/field.
    expect(err, where).toMatch(/(\.(jsonl?|ya?ml|txt)(:\d+(:\d+)?)?|[a-z_]+(\[\d+\])?(\.[a-z_]+)*: )/)
  }
}

/** Strict JSON: parses (no NaN/Infinity literal), and no number in it overflows (`1e999`). */
function strictJson(file: string): unknown {
  const value: unknown = JSON.parse(readFileSync(file, 'utf8'))
  const walk = (v: unknown, at: string): void => {
    if (typeof v === 'number') expect(Number.isFinite(v), `${file} ${at}`).toBe(true)
    else if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, `${at}[${i}]`)
    } else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${at}.${k}`)
  }
  walk(value, '')
  return value
}

describe('fuzz: manifests through validate', () => {
  const m = new Mutator(SEED)
  const bases = [
    {
      name: 'm.yml',
      text: stringify(
        baseManifest({ budgets: { timeout_s: 600 }, retries: { max: 2, on: ['infra'], backoff_s: 1 } }),
      ),
    },
    { name: 'm.json', text: JSON.stringify(baseManifest(), null, 2) },
  ]
  it(
    `${share(0.4)} mutated manifests end in exit 0 or 2 with a located message`,
    async () => {
      const dir = tmp()
      for (let i = 0; i < share(0.4); i++) {
        const base = m.pick(bases)
        const { text, op } = m.mutate(base.text)
        const file = path.join(dir, base.name)
        writeFileSync(file, text)
        io.err = ''
        io.out = ''
        process.exitCode = undefined
        const code = await main(['validate', file])
        const label = `manifest case ${i} (${op}): ${JSON.stringify(text.slice(0, 300))}`
        expect([0, 2], label).toContain(code)
        checkMessage(code, label)
        if (code === 2) expect(io.err, label).toContain(file)
      }
      rmSync(dir, { recursive: true, force: true })
    },
    budget(share(0.4)),
  )
})

describe('fuzz: leg artifacts and plan.json through aggregate', () => {
  let plan: Plan
  let artifacts: string
  let planFile: string
  beforeAll(async () => {
    plan = await makePlan({ panel: { source: 'inline', instances: ids(4) } })
    artifacts = writeArtifacts(plan, pairedOutcomes(plan, { both: 2, bOnly: 1, cOnly: 1, neither: 0 }))
    planFile = writePlan(plan)
  })

  it(
    `${share(0.35)} mutated attempts/ledger/leg files: every row counted or listed, outputs strict JSON`,
    async () => {
      const m = new Mutator(SEED + 1)
      for (let i = 0; i < share(0.35); i++) {
        const leg = m.pick(plan.legs)
        const name = m.pick(['attempts.jsonl', 'attempts.jsonl', 'ledger.jsonl', 'leg.json'])
        const file = path.join(artifacts, leg.artifact, name)
        const original = readFileSync(file, 'utf8')
        const { text, op } = m.mutate(original)
        writeFileSync(file, text)
        const out = tmp()
        io.err = ''
        io.out = ''
        process.exitCode = undefined
        try {
          const code = await main([
            'aggregate',
            '--plan',
            planFile,
            '--artifacts',
            artifacts,
            '--out',
            out,
            '--resamples',
            '200',
          ])
          const label = `artifact case ${i} (${op} in ${leg.artifact}/${name}): ${JSON.stringify(text.slice(0, 400))}`
          expect([0, 1], label).toContain(code)
          checkMessage(code, label)
          const c = strictJson(path.join(out, 'comparison.json')) as {
            cells: { id: string; intent_to_treat: { attempts: number | null } }[]
            input_errors: { file: string; line: number | null }[]
          }
          if (name === 'attempts.jsonl') {
            const rel = `${leg.artifact}/attempts.jsonl`
            const lines = text.split('\n').filter((l) => l.trim() !== '').length
            const listed = c.input_errors.filter((e) => e.file === rel && e.line !== null).length
            const counted = c.cells.find((x) => x.id === leg.cell)?.intent_to_treat.attempts ?? 0
            expect(counted + listed, `${label}\n${JSON.stringify(c.input_errors)}`).toBeGreaterThanOrEqual(
              lines,
            )
          }
        } finally {
          writeFileSync(file, original)
          rmSync(out, { recursive: true, force: true })
        }
      }
    },
    budget(share(0.35)),
  )

  it(
    `${share(0.1)} mutated plan.json files: exit 0, 1 or 2 with a located message`,
    async () => {
      const m = new Mutator(SEED + 2)
      const original = readFileSync(planFile, 'utf8')
      for (let i = 0; i < share(0.1); i++) {
        const { text, op } = m.mutate(original)
        writeFileSync(planFile, text)
        const out = tmp()
        io.err = ''
        io.out = ''
        process.exitCode = undefined
        try {
          const code = await main([
            'aggregate',
            '--plan',
            planFile,
            '--artifacts',
            artifacts,
            '--out',
            out,
            '--resamples',
            '200',
          ])
          const label = `plan case ${i} (${op}): ${JSON.stringify(text.slice(0, 300))}`
          expect([0, 1, 2], label).toContain(code)
          checkMessage(code, label)
          if (code !== 2) strictJson(path.join(out, 'comparison.json'))
        } finally {
          writeFileSync(planFile, original)
          rmSync(out, { recursive: true, force: true })
        }
      }
    },
    budget(share(0.1)),
  )
})

describe('fuzz: published result files through compare', () => {
  it(
    `${share(0.15)} mutated SWE-bench and OpenHands files: exit 0 or 2, outputs strict JSON`,
    async () => {
      const m = new Mutator(SEED + 3)
      const dir = tmp()
      const instances = Array.from({ length: 12 }, (_, i) => `repo__repo-${i + 1}`)
      const resolvedList = JSON.stringify(
        {
          system: 'Sys A',
          resolved: instances.slice(0, 5),
          n_total: 12,
          cost_usd: Object.fromEntries(instances.map((id, i) => [id, 0.1 * (i + 1)])),
        },
        null,
        2,
      )
      const perInstance = JSON.stringify(
        Object.fromEntries(instances.map((id, i) => [id, { resolved: i % 3 === 0, cost: 0.2 + i / 100 }])),
        null,
        2,
      )
      const a = path.join(dir, 'a.json')
      const b = path.join(dir, 'b', 'instance_results', 'x.json')
      const { mkdirSync } = await import('node:fs')
      mkdirSync(path.dirname(b), { recursive: true })
      const list = path.join(dir, 'ids.txt')
      writeFileSync(list, instances.join('\n'))
      for (let i = 0; i < share(0.15); i++) {
        const which = m.int(0, 1)
        const mutated = m.mutate(which === 0 ? resolvedList : perInstance)
        writeFileSync(a, which === 0 ? mutated.text : resolvedList)
        writeFileSync(b, which === 1 ? mutated.text : perInstance)
        const out = path.join(dir, `out-${i}`)
        io.err = ''
        io.out = ''
        process.exitCode = undefined
        const code = await main([
          'compare',
          '--baseline',
          a,
          '--treatment',
          b,
          '--instances',
          list,
          '--out',
          out,
          '--resamples',
          '200',
        ])
        const label = `published case ${i} (${mutated.op} in ${which === 0 ? 'a.json' : 'x.json'}): ${JSON.stringify(mutated.text.slice(0, 300))}`
        expect([0, 2], label).toContain(code)
        checkMessage(code, label)
        if (code === 0) strictJson(path.join(out, 'comparison.json'))
        rmSync(out, { recursive: true, force: true })
      }
      rmSync(dir, { recursive: true, force: true })
    },
    budget(share(0.15)),
  )
})
