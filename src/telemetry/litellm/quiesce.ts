/** One look at the spend logs: how many rows match and what the key has spent (null when not known). */
export interface QuiescenceProbe {
  rows: number | null
  spendUsd: number | null
}

export interface QuiescenceOptions {
  /** The rows and spend must stay unchanged this long, ms (`settle_s`). */
  settleMs: number
  /** Give up after this long, ms (`max_wait_s`). */
  maxWaitMs: number
  /** Time between probes, ms. */
  pollMs: number
  /** Rows known to be coming (requests the front proxy forwarded): wait at least until they are visible. */
  expectedRows?: number
  now?: () => number
  sleep?: (ms: number) => Promise<void>
}

export interface QuiescenceResult {
  settled: boolean
  waitedMs: number
  last: QuiescenceProbe
  /** Why it did not settle, when it did not. */
  reason: string | null
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Wait until LiteLLM's asynchronous batch writes have landed (telemetry.md 6.7): the row count and the
 * key spend unchanged for `settleMs` (and at least `expectedRows` rows visible), bounded by `maxWaitMs`.
 */
export async function waitForQuiescence(
  probe: () => Promise<QuiescenceProbe>,
  opts: QuiescenceOptions,
): Promise<QuiescenceResult> {
  const now = opts.now ?? (() => performance.now())
  const sleep = opts.sleep ?? defaultSleep
  const start = now()
  let last = await probe()
  let lastChange = now()
  for (;;) {
    const visible = last.rows ?? 0
    const reached = opts.expectedRows === undefined || visible >= opts.expectedRows
    const t = now()
    if (reached && t - lastChange >= opts.settleMs) {
      return { settled: true, waitedMs: t - start, last, reason: null }
    }
    if (t - start >= opts.maxWaitMs) {
      const reason = reached
        ? `spend logs still changing after ${Math.round(opts.maxWaitMs / 1000)} s`
        : `only ${visible} of ${opts.expectedRows} rows visible after ${Math.round(opts.maxWaitMs / 1000)} s`
      return { settled: false, waitedMs: t - start, last, reason }
    }
    await sleep(opts.pollMs)
    const p = await probe()
    if (p.rows !== last.rows || p.spendUsd !== last.spendUsd) lastChange = now()
    last = p
  }
}
