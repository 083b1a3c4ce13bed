import type { z } from 'zod'
import { REQUEST_ROLES, type RequestRoleSchema, type TelemetrySummary } from '../records/ledger.js'

type Role = z.infer<typeof RequestRoleSchema>

/** A trial's proxy requests by role and the sums of their parts, over every attempt of the trial. */
export interface TrialRequests {
  /** Requests and spend (USD; null when any is unpriced) by role; null when an attempt recorded no roles. */
  roles: Record<Role, { requests: number; spend_usd: number | null }> | null
  /** Sums of request parts; null when an attempt recorded none. */
  parts: {
    requests: number
    unread: number
    bytes: number
    tool_schema_bytes: number
    system_bytes: number
    history_bytes: number
    latest_message_bytes: number
    cache_prefix_bytes: number
  } | null
  /** Each allowlisted parameter's distinct values over the trial (at most 8 each). */
  params: Record<string, string[]>
}

/** A parameter name and value as the proxy writes them (short identifiers; numbers and booleans as text). */
const NAME = /^[a-z_]{1,32}$/
const WORD = /^[A-Za-z0-9_.:+-]{1,32}$/

/** Roles a trial starts from: every one at zero, in REQUEST_ROLES order. */
function zeroRoles(): NonNullable<TrialRequests['roles']> {
  const roles: Partial<NonNullable<TrialRequests['roles']>> = {}
  for (const r of REQUEST_ROLES) roles[r] = { requests: 0, spend_usd: 0 }
  return roles as NonNullable<TrialRequests['roles']>
}

/**
 * The requests of a trial from its attempts' telemetry summaries (pure). An attempt that recorded no
 * roles (a spend-log source, or records written before roles were kept) makes the trial's roles null,
 * never zero; likewise for parts. Null when the trial has no attempt.
 */
export function trialRequests(summaries: readonly TelemetrySummary[]): TrialRequests | null {
  if (summaries.length === 0) return null
  // Roles are counted from the first attempt that has them, and only while every attempt does (most
  // summaries of a spend-log source have none: no sums are set up for them).
  let rolesKnown = true
  let roles: TrialRequests['roles'] = null
  let parts: TrialRequests['parts'] = zeroParts()
  const params: Record<string, string[]> = {}
  for (const t of summaries) {
    if (t.coverage === 'missing') {
      rolesKnown = false
      parts = null
      continue
    }
    if (!t.request_roles) rolesKnown = false
    if (rolesKnown) {
      roles ??= zeroRoles()
      for (const r of t.request_roles ?? []) {
        const c = roles[r.role]
        c.requests += r.requests
        c.spend_usd = c.spend_usd === null || r.spend_usd === null ? null : c.spend_usd + r.spend_usd
      }
    }
    const p = t.request_parts
    if (!p) parts = null
    if (parts && p) {
      for (const k of Object.keys(parts) as (keyof NonNullable<TrialRequests['parts']>)[]) parts[k] += p[k]
      for (const { name, values } of p.params) {
        // Read from an artifact: only names and values the proxy could have written are kept.
        if (!NAME.test(name)) continue
        const list = params[name] ?? []
        params[name] = list
        for (const v of values) if (WORD.test(v) && !list.includes(v) && list.length < 8) list.push(v)
      }
    }
  }
  for (const list of Object.values(params)) list.sort()
  return { roles: rolesKnown ? (roles ?? zeroRoles()) : null, parts, params }
}

/** Primary requests of an attempt (null when it recorded no roles): what a primary-only request rule counts. */
export function primaryRequests(t: TelemetrySummary): number | null {
  if (!t.request_roles) return null
  return t.request_roles.find((r) => r.role === 'primary')?.requests ?? 0
}

/** Request-part sums with nothing counted yet (a trial's, or a cell's over its trials). */
export function zeroParts(): NonNullable<TrialRequests['parts']> {
  return {
    requests: 0,
    unread: 0,
    bytes: 0,
    tool_schema_bytes: 0,
    system_bytes: 0,
    history_bytes: 0,
    latest_message_bytes: 0,
    cache_prefix_bytes: 0,
  }
}
