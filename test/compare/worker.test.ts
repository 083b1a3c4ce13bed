import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readLegArtifacts } from '../../src/ingest/artifacts.js'
import { fastCheckSource } from '../../src/ingest/fast-check.js'
import { type LedgerFileResult, ledgerOffThread, startSums, sumReplicates } from '../../src/ingest/worker.js'
import { LedgerRowSchema } from '../../src/records/ledger.js'
import { getResamplePlan } from '../../src/stats/resample-plan.js'
import { createRng, seedState } from '../../src/stats/rng.js'
import { sum8, sumKernelModule } from '../../src/stats/sum-kernel.js'
import { ids, makePlan, pairedOutcomes, writeArtifacts } from './fixtures.js'

/** Artifacts with every kind of ledger problem: broken JSON, schema-invalid rows, blank lines, CRLF. */
async function brokenLedgers() {
  const plan = await makePlan({ panel: { source: 'inline', instances: ids(6) } })
  const dir = writeArtifacts(plan, pairedOutcomes(plan, { both: 3, bOnly: 1, cOnly: 1, neither: 1 }))
  const [legA, legB] = plan.legs
  const ledgerA = path.join(dir, legA!.artifact, 'ledger.jsonl')
  const rows = readFileSync(ledgerA, 'utf8').trimEnd().split('\n')
  const bad = JSON.parse(rows[0]!)
  bad.tokens.output = -3
  const extra = { ...JSON.parse(rows[1]!), unknown_field: 1 }
  const proto = rows[2]!.replace('"usage_object":null', '"usage_object":{"__proto__":{},"n":1}')
  appendFileSync(
    ledgerA,
    ['', '{"truncated": ', JSON.stringify(bad), '   ', JSON.stringify(extra), proto].join('\n'),
  )
  // CRLF line ends and no final newline in the other leg's ledger
  const ledgerB = path.join(dir, legB!.artifact, 'ledger.jsonl')
  writeFileSync(ledgerB, readFileSync(ledgerB, 'utf8').trimEnd().split('\n').join('\r\n'))
  return { plan, dir, ledgerA }
}

describe('ledger files read on the worker thread', () => {
  it('give the same rows, hashes and file:line errors as reading them on this thread', async () => {
    const { plan, dir } = await brokenLedgers()
    const here = await readLegArtifacts(plan, dir, { threads: false })
    const there = await readLegArtifacts(plan, dir, { threads: true })
    expect(there).toEqual(here)
    const file = `${plan.legs[0]!.artifact}/ledger.jsonl`
    const errors = here.inputErrors.filter((e) => e.file === file)
    expect(errors.map((e) => [e.line, e.message])).toEqual([
      [expect.any(Number), expect.stringMatching(/^not valid JSON/)],
      [expect.any(Number), expect.stringContaining('tokens.output')],
      [expect.any(Number), expect.stringContaining('unknown_field')],
    ])
    // The row with a `__proto__` usage key is valid (zod drops the key) and is counted.
    const counted = [...here.legs[0]!.ledgerRows.values()].reduce((a, b) => a + b, 0)
    expect(counted).toBe(
      readFileSync(path.join(dir, file), 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{"s')).length - 2,
    )
  })

  it('by default, above 4 MB of ledgers, the two threads share the files: still the same result', async () => {
    const plan = await makePlan({ panel: { source: 'inline', instances: ids(24) } })
    const atts = pairedOutcomes(plan, { both: 10, bOnly: 5, cOnly: 5, neither: 4 }).map((a) => ({
      ...a,
      telemetry: { ...a.telemetry, rows: 110, proxy_requests: 110 },
    }))
    const dir = writeArtifacts(plan, atts)
    const sizes = plan.legs.map((l) => readFileSync(path.join(dir, l.artifact, 'ledger.jsonl')).length)
    expect(sizes.reduce((a, b) => a + b, 0)).toBeGreaterThan(4 * 1024 * 1024)
    const here = await readLegArtifacts(plan, dir, { threads: false })
    expect(await readLegArtifacts(plan, dir)).toEqual(here)
    expect(here.legs[0]!.ledgerRows.size).toBe(24)
  })

  it('the worker itself answers: counts per attempt, items for the lines it could not accept', async () => {
    const { ledgerA } = await brokenLedgers()
    const r = (await ledgerOffThread(ledgerA, fastCheckSource(LedgerRowSchema)!)) as LedgerFileResult
    expect(r).not.toBeNull()
    expect(r!.sha256).toMatch(/^[0-9a-f]{64}$/)
    // Every line it could not accept comes back whole (the calling thread words the error), the one
    // that is not JSON included.
    expect(r!.items).toHaveLength(4)
    expect(r!.items.every((i) => typeof i.raw === 'string' && i.message === undefined)).toBe(true)
    expect(() => JSON.parse(r!.items[0]!.raw!)).toThrow()
    expect(await ledgerOffThread(`${ledgerA}.missing`, fastCheckSource(LedgerRowSchema)!)).toBeNull()
    // A file this thread has claimed is left to it.
    const claims = new Int32Array(new SharedArrayBuffer(8))
    claims[1] = 1
    expect(await ledgerOffThread(ledgerA, fastCheckSource(LedgerRowSchema)!, { claims, index: 1 })).toBe(
      'taken',
    )
    expect(await ledgerOffThread(ledgerA, fastCheckSource(LedgerRowSchema)!, { claims, index: 0 })).toEqual(r)
    expect(claims[0]).toBe(1)
    // A job that fails is refused, and the worker stays up for the next one.
    await expect(ledgerOffThread(ledgerA, 'return (')).rejects.toThrow(SyntaxError.name)
    expect(await ledgerOffThread(ledgerA, fastCheckSource(LedgerRowSchema)!)).toEqual(r)
  })

  it('counts interleaved, repeated and user-simulation rows and each run identity as this thread does', async () => {
    const { ledgerA } = await brokenLedgers()
    const first = JSON.parse(readFileSync(ledgerA, 'utf8').split('\n')[0]!)
    const row = (instance: string, trial: number, attribution: Record<string, unknown> = {}) =>
      JSON.stringify({
        ...first,
        attribution: { ...first.attribution, instance_id: instance, trial, attempt: 1, ...attribution },
      })
    const lines = [
      row('i1', 0),
      row('i1', 0),
      row('i2', 0),
      row('i1', 0),
      row('i1', 0, { role: 'user_simulation' }),
      row('i1', 0),
      row('i1', 1, { run_id: 'other-run' }),
      row('i1', 1),
      row('i1', 1, { run_id: 'other-run', leg_attempt: 2 }),
      row('i2', 0),
    ]
    writeFileSync(ledgerA, `${lines.join('\n')}\n`)
    const r = (await ledgerOffThread(ledgerA, fastCheckSource(LedgerRowSchema)!)) as LedgerFileResult
    const key = (instance: string, trial: number) =>
      `${first.attribution.cell_id}\u0000${instance}\u0000${trial}\u0000${1}`
    expect([...r.counts]).toEqual([
      [key('i1', 0), 4],
      [key('i2', 0), 2],
      [key('i1', 1), 3],
    ])
    const run = first.attribution.run_id
    expect([...r.identities]).toEqual([
      [`${run}\u0000\u0000`, 1],
      [`other-run\u0000\u0000`, 7],
      [`other-run\u0000\u00002`, 9],
    ])
  })

  it('a missing ledger and a missing leg are reported the same way on both paths', async () => {
    const { plan, dir } = await brokenLedgers()
    rmSync(path.join(dir, plan.legs[1]!.artifact, 'ledger.jsonl'))
    const here = await readLegArtifacts(plan, dir, { threads: false })
    const there = await readLegArtifacts(plan, dir, { threads: true })
    expect(there).toEqual(here)
    expect(here.inputErrors).toContainEqual({
      file: `${plan.legs[1]!.artifact}/ledger.jsonl`,
      line: null,
      message: 'ledger.jsonl not found',
    })
  })
})

describe('bootstrap column sums', () => {
  function job(n: number, B: number, groups: number) {
    let a = 17
    const next = () => {
      a = (Math.imul(a, 1103515245) + 12345) >>> 0
      return a
    }
    const idx = Uint32Array.from({ length: n * B }, () => next() % n)
    const inter = Float64Array.from({ length: groups * n * 8 }, () => (next() % 100_000) / 7)
    return { idx, inter }
  }

  it('WebAssembly SIMD is available on the supported Node versions', () => {
    expect(sumKernelModule()).not.toBeNull()
  })

  it('are bit-identical from the WebAssembly kernel, with or without the worker, and the JavaScript loop', () => {
    const [n, B, groups] = [137, 3001, 3]
    const { idx, inter } = job(n, B, groups)
    const js = new Float64Array(groups * 8 * B)
    for (let g = 0; g < groups; g++) {
      sum8(
        idx,
        n,
        0,
        B,
        inter.subarray(g * n * 8, (g + 1) * n * 8),
        js.subarray(g * 8 * B, (g + 1) * 8 * B),
        B,
      )
    }
    const alone = sumReplicates(idx, n, B, inter, groups, { parallel: false })
    const shared = sumReplicates(idx, n, B, inter, groups, { parallel: true })
    const bytes = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)
    expect(bytes(alone).equals(bytes(js))).toBe(true)
    expect(bytes(shared).equals(bytes(js))).toBe(true)
    // the worker draws the plan from its seed: the same plan as getResamplePlan, so the same sums
    const seeded = getResamplePlan(n, B, 99).indices!
    const fromSeed = startSums({ seed: 99 }, n, B, inter, groups, { parallel: true }).finish()
    const fromIndices = sumReplicates(seeded, n, B, inter, groups, { parallel: false })
    expect(bytes(fromSeed).equals(bytes(fromIndices))).toBe(true)
    // drawn on this thread (no worker): the same plan again
    const here = startSums({ seed: 99 }, n, B, inter, groups, { parallel: false }).finish()
    expect(bytes(here).equals(bytes(fromIndices))).toBe(true)
    // each sum is the plain sequential sum of its column over the replicate's draws
    let s = 0
    for (let j = 0; j < n; j++) s += inter[(g1 * n + idx[5 * n + j]!) * 8 + 3]!
    expect(alone[(g1 * 8 + 3) * B + 5]).toBe(s)
  })
})

const g1 = 1

describe('the resample plan drawn by the WebAssembly module', () => {
  type Fill = (out: number, count: number, n: number, maxAllowed: bigint, state: number) => void
  const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true })
  const fill = new WebAssembly.Instance(sumKernelModule()!, { env: { mem: memory } }).exports.fill as Fill
  const STATE = 60_000
  const maxAllowed = (n: number) => BigInt(n > 2 ? Math.trunc(4294967296 / n) * n : 4294967296)

  it.each([
    [1, 7, 3],
    [2, 9, 40],
    [3, 1, 1000],
    [500, 7, 5000],
    // about half of all draws rejected: n just above 2³¹
    [2 ** 31 + 1, 5, 3000],
    [2 ** 32 - 1, 11, 3000],
  ])(
    'n = %d, seed %d, %d indices: the draws of createRng(seed).fillIndices, in one call or in pieces',
    (n, seed, count) => {
      const want = new Uint32Array(count + 1)
      createRng(seed).fillIndices(want, 0, count + 1, n)
      new Int32Array(memory.buffer, STATE, 4).set(seedState(seed))
      fill(0, count, n, maxAllowed(n), STATE)
      expect([...new Uint32Array(memory.buffer, 0, count)]).toEqual([...want.subarray(0, count)])
      // the state it leaves continues the same stream
      fill(0, 1, n, maxAllowed(n), STATE)
      expect(new Uint32Array(memory.buffer, 0, 1)[0]).toBe(want[count])
      // in pieces of uneven size, through the state in memory
      new Int32Array(memory.buffer, STATE, 4).set(seedState(seed))
      const cuts = [0, 1, Math.floor(count / 3), count].filter((c, i, a) => i === 0 || c > a[i - 1]!)
      for (let i = 1; i < cuts.length; i++)
        fill(4 * cuts[i - 1]!, cuts[i]! - cuts[i - 1]!, n, maxAllowed(n), STATE)
      expect([...new Uint32Array(memory.buffer, 0, count)]).toEqual([...want.subarray(0, count)])
    },
  )

  it('draws nothing for a count of 0 and leaves the state as it was', () => {
    new Int32Array(memory.buffer, STATE, 4).set(seedState(4))
    new Uint32Array(memory.buffer, 0, 1)[0] = 12345
    fill(0, 0, 10, maxAllowed(10), STATE)
    expect(new Uint32Array(memory.buffer, 0, 1)[0]).toBe(12345)
    expect([...new Int32Array(memory.buffer, STATE, 4)]).toEqual([...seedState(4)])
  })
})
