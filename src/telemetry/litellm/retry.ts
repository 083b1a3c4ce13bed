/** A LiteLLM answer with a non-2xx status. 429 and 5xx are retried; other 4xx are contract errors. */
export class LiteLLMError extends Error {
  constructor(
    readonly status: number,
    readonly route: string,
    message: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(`LiteLLM ${route} answered ${status}: ${message}`)
    this.name = 'LiteLLMError'
  }

  get retryable(): boolean {
    return this.status === 429 || this.status >= 500
  }
}

export interface RetryOptions {
  /** Retries after the first try. Default 5. */
  retries?: number
  /** First backoff ceiling, ms. Default 250. */
  baseMs?: number
  /** Largest backoff, ms. Default 8 000. */
  maxMs?: number
  sleep?: (ms: number) => Promise<void>
  random?: () => number
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Network failures (refused, reset, DNS, timeouts) are worth another try; so are 429 and 5xx. */
export function isRetryable(e: unknown): boolean {
  if (e instanceof LiteLLMError) return e.retryable
  return (
    e instanceof Error && (e.name === 'TypeError' || e.name === 'TimeoutError' || e.name === 'AbortError')
  )
}

/**
 * Run `fn` with exponential backoff and full jitter (delay = random · min(max, base · 2^i)), honouring
 * a 429's Retry-After when it is longer. A non-retryable error (a 4xx contract error) is thrown at once.
 */
export async function withRetry<T>(
  fn: (tryIndex: number) => Promise<T>,
  opts: RetryOptions = {},
): Promise<T> {
  const retries = opts.retries ?? 5
  const base = opts.baseMs ?? 250
  const max = opts.maxMs ?? 8000
  const sleep = opts.sleep ?? defaultSleep
  const random = opts.random ?? Math.random
  for (let i = 0; ; i++) {
    try {
      return await fn(i)
    } catch (e) {
      if (i >= retries || !isRetryable(e)) throw e
      let delay = random() * Math.min(max, base * 2 ** i)
      if (e instanceof LiteLLMError && e.retryAfterMs !== null)
        delay = Math.max(delay, Math.min(e.retryAfterMs, max))
      await sleep(delay)
    }
  }
}
