import { Worker } from 'node:worker_threads'
import { getResamplePlan, seedState, sum8, sumKernelModule } from '../stats/index.js'

// The aggregate stage's second thread. Its code is a self-contained script (no imports of ours) started
// with `eval`, so it runs the same from the sources, the tests and the single-file ncc bundles. Its
// jobs: reading, hashing and checking ledger.jsonl files (a large input with a small result: row counts
// per attempt) while this thread parses attempts.jsonl; then drawing the bootstrap resample plan and
// summing the bootstrap columns while this thread computes the cell summaries and the MDE. Work is
// claimed through shared memory (Atomics), so whatever the worker has not started when this thread
// needs it is done here, with the same code: results never depend on whether or when the worker ran.

/**
 * Claims slices of a sums job (ctrl[u]: 0 free, 1 claimed, 2 done) and runs the WebAssembly kernel
 * (sum-kernel.ts) on them; `descending` on the worker, so the two threads meet in the middle.
 */
const SUMS_JOB = `function sumsJob(job, sum8, descending) {
  const { n, B, groups, idx, inter, out, ctrl, sliceRows, units } = job
  for (let i = 0; i < units; i++) {
    const u = descending ? units - 1 - i : i
    if (Atomics.compareExchange(ctrl, u, 0, 1) !== 0) continue
    const first = u * sliceRows
    const rows = Math.min(sliceRows, B - first)
    for (let g = 0; g < groups; g++) sum8(idx, n, first, rows, inter + g * n * 64, out + g * 64 * B, B)
    Atomics.store(ctrl, u, 2)
    Atomics.notify(ctrl, u)
  }
}`

/**
 * Draws the resample plan with the WebAssembly `fill` (sum-kernel.ts: the draws of rng.ts): count
 * indices in [0, n − 1] at byte offset `out`, from the generator state at byte offset `state`, which
 * it advances. In calls of 65,536 indices, so the engine's optimized code for `fill` serves most of
 * the draw (a call already running keeps the code it started with).
 */
const DRAW_PLAN = `function drawPlan(fill, out, count, n, state) {
  const maxAllowed = BigInt(n > 2 ? Math.trunc(4294967296 / n) * n : 4294967296)
  for (let at = 0; at < count; at += 65536) fill(out + 4 * at, Math.min(65536, count - at), n, maxAllowed, state)
}`

/**
 * Reads one ledger.jsonl: SHA-256 of its bytes, and per line (numbered as forEachJsonl does, blank lines
 * skipped) either the row counted under its attribution key — when it is JSON and the compiled schema
 * check accepts it — or an item holding the line (`raw`) for the caller, which words the error of a
 * line that is not JSON and lets zod judge a row the check did not accept, as on the calling thread. Null when the file cannot be read.
 */
const LEDGER_JOB = `function ledgerJob(file, check) {
  let bytes
  // Opened without following a symbolic link, and read only when it is a regular file.
  const fs = require('node:fs')
  let fd
  try { fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW) } catch { return null }
  try { bytes = fs.fstatSync(fd).isFile() ? fs.readFileSync(fd) : null } catch { bytes = null } finally { fs.closeSync(fd) }
  if (bytes === null) return null
  const sha256 = require('node:crypto').createHash('sha256').update(bytes).digest('hex')
  const text = bytes.toString(require('node:buffer').isAscii(bytes) ? 'latin1' : 'utf8')
  bytes = null
  const counts = new Map()
  const identities = new Map()
  const items = []
  let start = 0
  let line = 0
  // Rows of one attempt (and of one run) come together: the last row's attribution is remembered,
  // so a row like it is counted without making its keys again.
  let lastRun, lastPlan, lastLegAttempt
  let seenIdentity = false
  let runCell, runInstance, runTrial, runAttempt
  let runLength = 0
  while (start <= text.length) {
    let end = text.indexOf('\\n', start)
    if (end === -1) end = text.length
    line++
    const raw = text.slice(start, end)
    start = end + 1
    if (raw.trim() === '') {
      if (end === text.length) break
      continue
    }
    let json
    try {
      json = JSON.parse(raw)
    } catch {
      items.push({ line, raw })
      continue
    }
    if (!check(json)) {
      items.push({ line, raw })
      continue
    }
    const a = json.attribution
    if (a && !(seenIdentity && a.run_id === lastRun && a.plan_sha256 === lastPlan && a.leg_attempt === lastLegAttempt)) {
      // The run identity the row states (ingest/artifacts.ts ledgerIdentity): run, plan, leg attempt.
      const id = a.run_id + '\\u0000' + (a.plan_sha256 || '') + '\\u0000' + (a.leg_attempt || '')
      if (!identities.has(id)) identities.set(id, line)
      seenIdentity = true
      lastRun = a.run_id
      lastPlan = a.plan_sha256
      lastLegAttempt = a.leg_attempt
    }
    // The simulated user's rows are not the harness's: never counted against its attempt.
    if (!a || a.role === 'user_simulation') continue
    if (runLength > 0 && a.cell_id === runCell && a.instance_id === runInstance && a.trial === runTrial && a.attempt === runAttempt) {
      runLength++
      continue
    }
    if (runLength > 0) countRun(counts, runCell, runInstance, runTrial, runAttempt, runLength)
    runCell = a.cell_id
    runInstance = a.instance_id
    runTrial = a.trial
    runAttempt = a.attempt
    runLength = 1
  }
  if (runLength > 0) countRun(counts, runCell, runInstance, runTrial, runAttempt, runLength)
  return { sha256, counts, identities, items }
}
// A function of its own rather than a closure made per file: optimized code that called one file's
// closure would be thrown away at the next file's ("wrong call target") and compiled again.
function countRun(counts, cell, instance, trial, attempt, length) {
  const key = cell + '\\u0000' + instance + '\\u0000' + trial + '\\u0000' + attempt
  counts.set(key, (counts.get(key) || 0) + length)
}`

const WORKER_SOURCE = `'use strict'
const { parentPort } = require('node:worker_threads')
${DRAW_PLAN}
${SUMS_JOB}
${LEDGER_JOB}
const checks = new Map()
parentPort.on('message', (m) => {
  if (m.type === 'sums') {
    const { sum8, fill } = new WebAssembly.Instance(m.module, { env: { mem: m.mem } }).exports
    // The resample plan (ctrl[units]: 0 to draw, 1 being drawn, 2 ready), unless the caller has it;
    // drawn from the generator state the caller left at m.state (the caller draws from its own).
    const plan = m.units
    if (Atomics.compareExchange(m.ctrl, plan, 0, 1) === 0) {
      drawPlan(fill, m.idx, m.n * m.B, m.n, m.state)
      Atomics.store(m.ctrl, plan, 2)
      Atomics.notify(m.ctrl, plan)
    }
    while (Atomics.load(m.ctrl, plan) !== 2) Atomics.wait(m.ctrl, plan, 1, 50)
    return sumsJob(m, sum8, true)
  }
  if (m.type === 'ledger') {
    // The calling thread may have taken this file already (it reads a file itself rather than wait).
    if (m.claims && Atomics.compareExchange(m.claims, m.index, 0, 1) !== 0) {
      return parentPort.postMessage({ id: m.id, result: 'taken' })
    }
    let result
    try {
      let check = checks.get(m.checkSource)
      if (!check) {
        check = new Function('c', m.checkSource)([])
        checks.set(m.checkSource, check)
      }
      result = ledgerJob(m.file, check)
    } catch (e) {
      return parentPort.postMessage({ id: m.id, failed: String(e) })
    }
    parentPort.postMessage({ id: m.id, result })
  }
})`

type Sum8 = (
  idx: number,
  n: number,
  first: number,
  rows: number,
  inter: number,
  out: number,
  B: number,
) => void

/** The kernel module's `fill` (sum-kernel.ts): maxAllowed is an i64, so a BigInt. */
type Fill = (out: number, count: number, n: number, maxAllowed: bigint, state: number) => void

// This thread claims slices and draws plans with the very same source.
const { sumsJob, drawPlan } = new Function(`${SUMS_JOB}\n${DRAW_PLAN}\nreturn { sumsJob, drawPlan }`)() as {
  sumsJob: (job: SumsJob, sum8: Sum8, descending: boolean) => void
  drawPlan: (fill: Fill, out: number, count: number, n: number, state: number) => void
}

/** A sums job: byte offsets of the plan, the interleaved columns and the output in one shared memory. */
interface SumsJob {
  n: number
  B: number
  groups: number
  idx: number
  inter: number
  out: number
  ctrl: Int32Array
  sliceRows: number
  units: number
}

/** What ledgerJob returns for one file. */
export interface LedgerFileResult {
  sha256: string
  /** Rows the schema check accepted, per attribution key (attemptKey). */
  counts: Map<string, number>
  /** Each run identity the rows' attribution states (ledgerIdentity), with the first line stating it. */
  identities: Map<string, number>
  /** Lines in order that are not JSON (`message`) or that the check did not accept (`raw`). */
  items: Array<{ line: number; message?: string; raw?: string }>
}

let worker: Worker | null | undefined
let dead = false
let nextId = 0
const pending = new Map<
  number,
  { resolve: (r: LedgerFileResult | null | 'taken') => void; reject: (e: Error) => void }
>()

/** The shared worker, started on first use; null when threads are unavailable or it failed. */
function getWorker(): Worker | null {
  if (worker !== undefined || dead) return dead ? null : (worker ?? null)
  try {
    const w = new Worker(WORKER_SOURCE, { eval: true })
    w.unref()
    w.on('message', (m: { id: number; result?: LedgerFileResult | null | 'taken'; failed?: string }) => {
      const p = pending.get(m.id)
      if (!p) return
      pending.delete(m.id)
      if (m.failed !== undefined) p.reject(new Error(m.failed))
      else p.resolve(m.result ?? null)
    })
    const fail = (e: unknown) => {
      dead = true
      worker = null
      for (const p of pending.values()) p.reject(e instanceof Error ? e : new Error(String(e)))
      pending.clear()
    }
    w.on('error', fail)
    w.on('exit', () => fail(new Error('the aggregate worker exited')))
    worker = w
  } catch {
    dead = true
    worker = null
  }
  return worker
}

/**
 * Start the shared worker now rather than on first use: a thread takes tens of milliseconds to boot,
 * which it then spends while this thread reads the plan (the aggregate calls it first).
 */
export function startWorker(): void {
  getWorker()
}

/**
 * Stop the shared worker, if one was started; the next use starts a new one. Called when a command's
 * work is done: a worker that was handed shared WebAssembly memory keeps a message port open (even
 * when unref'd), which would keep the process from exiting.
 */
export async function stopWorker(): Promise<void> {
  const w = worker
  worker = undefined
  dead = false
  if (!w) return
  w.removeAllListeners('exit')
  w.removeAllListeners('error')
  for (const p of pending.values()) p.reject(new Error('the aggregate worker was stopped'))
  pending.clear()
  await w.terminate()
}

/**
 * Read, hash and check one ledger.jsonl on the worker. `checkSource` is the compiled schema check
 * (`fastCheckSource`). With `claim`, the worker first takes the file by setting claims[index] from 0
 * to 1, and answers 'taken' when the calling thread has done so first (Atomics.compareExchange on the
 * same slot: exactly one thread reads the file). Resolves null when the file cannot be read; rejects
 * when the worker is unavailable or fails (the caller then reads the file itself).
 */
export function ledgerOffThread(
  file: string,
  checkSource: string,
  claim?: { claims: Int32Array; index: number },
): Promise<LedgerFileResult | null | 'taken'> {
  const w = getWorker()
  if (!w) return Promise.reject(new Error('no worker'))
  const id = nextId++
  return new Promise<LedgerFileResult | null | 'taken'>((resolve, reject) => {
    pending.set(id, { resolve, reject })
    w.ref() // keep the process alive while a reply is due
    w.postMessage({ type: 'ledger', id, file, checkSource, ...claim })
  }).finally(() => {
    if (pending.size === 0) worker?.unref()
  })
}

/** Below this many additions the sums are not worth a second thread. */
const PARALLEL_SUMS_MIN = 20_000_000
/**
 * How long to wait for a slice the worker claimed (well under a millisecond of work) before computing
 * it here as well: on a busy machine the worker may be descheduled. Both write the same values.
 */
const SLICE_WAIT_MS = 3
/** Largest WebAssembly memory used (bytes); larger jobs run the JavaScript kernel. */
const WASM_MAX_BYTES = 2 ** 31

/** How long to wait for the worker to finish drawing the plan before drawing it here as well. */
const PLAN_WAIT_MS = 250

/** The resample plan: its indices, or the seed to draw them from (getResamplePlan's plan, bit for bit). */
export type PlanSource = { indices: Uint32Array } | { seed: number }

/**
 * Per-replicate sums of `groups` groups of eight interleaved columns (sum-kernel.ts):
 * out[(g·8 + s)·B + r] = Σ_j inter[g·8n + 8·idx[r·n + j] + s], summed in index order, where idx is the
 * row-major B×n resample plan and `inter` holds groups × n × 8 values. For large jobs the worker
 * draws the plan (when given by its seed) and starts on the sums at once, and this thread is free to
 * do other work until it calls `finish()`, which computes every slice the worker has not claimed and
 * waits for the others. Small jobs, and any job without WebAssembly SIMD (the JavaScript kernel), are
 * computed before this returns. The sums are bit-identical in every case.
 */
export function startSums(
  plan: PlanSource,
  n: number,
  B: number,
  inter: Float64Array,
  groups: number,
  opts: { parallel?: boolean } = {},
): { finish: () => Float64Array } {
  const module = sumKernelModule()
  const align = (x: number) => Math.ceil(x / 16) * 16
  const interAt = align(4 * n * B)
  const outAt = align(interAt + 64 * n * groups)
  // Two generator states for drawing the plan: the worker's, then this thread's.
  const stateAt = align(outAt + 64 * B * groups)
  const bytes = stateAt + 32
  const indices = () => ('indices' in plan ? plan.indices : getResamplePlan(n, B, plan.seed).indices!)
  if (!module || bytes > WASM_MAX_BYTES) {
    const idx = indices()
    const out = new Float64Array(groups * 8 * B)
    for (let g = 0; g < groups; g++) {
      const columns = inter.subarray(g * n * 8, (g + 1) * n * 8)
      sum8(idx, n, 0, B, columns, out.subarray(g * 8 * B, (g + 1) * 8 * B), B)
    }
    return { finish: () => out }
  }
  const pages = Math.ceil(bytes / 65_536)
  const mem = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true })
  new Float64Array(mem.buffer, interAt, n * 8 * groups).set(inter.subarray(0, n * 8 * groups))
  const exports = new WebAssembly.Instance(module, { env: { mem } }).exports
  const kernel = exports.sum8 as Sum8
  const out = new Float64Array(mem.buffer, outAt, groups * 8 * B)
  // About 64 KiB of indices per slice: they stay in cache while every group reads them.
  const sliceRows = Math.max(1, Math.floor(16_384 / n))
  const units = Math.ceil(B / sliceRows)
  // ctrl[u] for each slice, ctrl[units] for the plan (0 to draw, 1 being drawn, 2 ready)
  const ctrl = new Int32Array(new SharedArrayBuffer(4 * (units + 1)))
  const job: SumsJob = { n, B, groups, idx: 0, inter: interAt, out: outAt, ctrl, sliceRows, units }
  const w = units > 1 && (opts.parallel ?? n * B * groups * 8 >= PARALLEL_SUMS_MIN) ? getWorker() : null
  const drawHere = () => {
    if ('indices' in plan) new Uint32Array(mem.buffer, 0, n * B).set(plan.indices)
    else {
      new Int32Array(mem.buffer, stateAt + 16, 4).set(seedState(plan.seed))
      drawPlan(exports.fill as Fill, 0, n * B, n, stateAt + 16)
    }
  }
  if (!w || 'indices' in plan) {
    drawHere()
    ctrl[units] = 2
  }
  if (!w) {
    sumsJob(job, kernel, false)
    return { finish: () => out }
  }
  if ('seed' in plan) new Int32Array(mem.buffer, stateAt, 4).set(seedState(plan.seed))
  w.postMessage({ type: 'sums', module, mem, state: stateAt, ...job })
  let done = false
  const finish = () => {
    if (done) return out
    if (Atomics.compareExchange(ctrl, units, 0, 1) === 0) {
      drawHere()
      Atomics.store(ctrl, units, 2)
      Atomics.notify(ctrl, units)
    } else if (
      Atomics.wait(ctrl, units, 1, PLAN_WAIT_MS) === 'timed-out' &&
      Atomics.load(ctrl, units) !== 2
    ) {
      drawHere() // the same indices the worker is writing
      Atomics.store(ctrl, units, 2)
      Atomics.notify(ctrl, units)
    }
    sumsJob(job, kernel, false)
    for (let u = 0; u < units; u++) {
      if (Atomics.load(ctrl, u) === 2) continue
      // Claimed by the worker: wait for it briefly, else compute the slice here too.
      if (Atomics.wait(ctrl, u, 1, SLICE_WAIT_MS) === 'timed-out' && Atomics.load(ctrl, u) !== 2) {
        const first = u * sliceRows
        const rows = Math.min(sliceRows, B - first)
        for (let g = 0; g < groups; g++)
          kernel(0, n, first, rows, interAt + g * n * 64, outAt + g * 64 * B, B)
        Atomics.store(ctrl, u, 2)
      }
    }
    done = true
    return out
  }
  return { finish }
}

/** startSums(…).finish(): the sums, computed before this returns. */
export function sumReplicates(
  idx: Uint32Array,
  n: number,
  B: number,
  inter: Float64Array,
  groups: number,
  opts: { parallel?: boolean } = {},
): Float64Array {
  return startSums({ indices: idx }, n, B, inter, groups, opts).finish()
}
