/**
 * LiteLLM `/spend/logs/v2` date bounds: `YYYY-MM-DD HH:MM:SS`, read as UTC, both bounds inclusive on
 * `startTime` (telemetry.md 6.1). ISO-8601 with `T`/`Z` is rejected by LiteLLM with a 400, so it is
 * never sent.
 */
export function formatLiteLLMDate(d: Date): string {
  if (Number.isNaN(d.getTime())) throw new Error('invalid date')
  return d.toISOString().slice(0, 19).replace('T', ' ')
}

/** The inclusive UTC window of an attempt, widened by `slackS` and rounded outward to whole seconds. */
export function attemptWindow(start: Date, end: Date, slackS: number): { start: string; end: string } {
  const s = Math.floor((start.getTime() - slackS * 1000) / 1000) * 1000
  const e = Math.ceil((end.getTime() + slackS * 1000) / 1000) * 1000
  return { start: formatLiteLLMDate(new Date(s)), end: formatLiteLLMDate(new Date(e)) }
}

/**
 * A LiteLLM timestamp (`2026-10-06T01:16:11.458+00:00`, `…Z`, or a naive UTC string) as ISO-8601 UTC,
 * or null when unreadable.
 */
export function toIsoUtc(v: unknown): string | null {
  if (typeof v !== 'string' || v === '') return null
  const naive = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(v)
  const t = Date.parse(naive ? `${v.replace(' ', 'T')}Z` : v)
  return Number.isNaN(t) ? null : new Date(t).toISOString()
}
