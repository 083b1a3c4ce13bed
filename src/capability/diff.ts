import type { CellCapabilities, ConfiguredCapabilities } from '../records/capabilities.js'
import { canonicalJson } from '../util/json.js'

/** The differences between two capability summaries, ready for one line. */
export interface CapabilityDiff {
  /** e.g. `opencode 1.18 → 1.19`, or `baseline (pi 0.73) → treatment (opencode 1.18)`. */
  label: string
  /** e.g. `+3 tools (a, b, c)`, `compaction on`, `retry off → on, max 3`. */
  changes: string[]
  /** Capabilities known on one side only: shown as unknown, never as a change. */
  unknown: string[]
}

/** Names shown in a line before the rest are counted. */
const SHOWN = 8

function nameSet(names: string[]): string {
  const shown = names.slice(0, SHOWN).join(', ')
  return names.length > SHOWN ? `${shown}, … ${names.length - SHOWN} more` : shown
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** `+2 tools (a, b)`, `−1 tool (c)` for two name lists. */
function setChanges(a: string[], b: string[], one: string, many?: string): string[] {
  const before = new Set(a)
  const after = new Set(b)
  const added = b.filter((x) => !before.has(x)).sort()
  const removed = a.filter((x) => !after.has(x)).sort()
  const out: string[] = []
  if (added.length > 0) out.push(`+${plural(added.length, one, many)} (${nameSet(added)})`)
  if (removed.length > 0) out.push(`−${plural(removed.length, one, many)} (${nameSet(removed)})`)
  return out
}

const onOff = (v: boolean) => (v ? 'on' : 'off')

type Side = { known: true; value: unknown } | { known: false }

/**
 * The tools each side offered: the names the proxy saw when both sides' requests named them, else
 * the configured allowlist when both state one, else unknown.
 */
function toolSides(a: CellCapabilities, b: CellCapabilities): { a: Side; b: Side; hashes: boolean } {
  const seen = (c: CellCapabilities) => (c.observed?.tools_named ? c.observed : null)
  const oa = seen(a)
  const ob = seen(b)
  if (oa && ob)
    return { a: { known: true, value: oa.tools }, b: { known: true, value: ob.tools }, hashes: true }
  const ca = a.configured.tools.value
  const cb = b.configured.tools.value
  if (ca !== null && cb !== null)
    return { a: { known: true, value: ca }, b: { known: true, value: cb }, hashes: false }
  // Known on one side only (by either source), or by different sources: not comparable, unknown.
  const any = (o: unknown, c: unknown): Side =>
    o || c !== null ? { known: true, value: null } : { known: false }
  return { a: any(oa, ca), b: any(ob, cb), hashes: false }
}

type Tool = { name: string; schema_sha256: (string | null)[] }

/** The differences from `a` to `b` (pure). */
export function diffCapabilities(a: CellCapabilities, b: CellCapabilities, label: string): CapabilityDiff {
  const changes: string[] = []
  const unknown: string[] = []

  const t = toolSides(a, b)
  if (t.a.known && t.b.known && t.a.value !== null && t.b.value !== null) {
    if (t.hashes) {
      const ta = t.a.value as Tool[]
      const tb = t.b.value as Tool[]
      changes.push(
        ...setChanges(
          ta.map((x) => x.name),
          tb.map((x) => x.name),
          'tool',
        ),
      )
      const byName = new Map(ta.map((x) => [x.name, x]))
      const changed = tb
        .filter((x) => {
          const old = byName.get(x.name)
          return (
            old !== undefined &&
            canonicalJson([...old.schema_sha256].sort()) !== canonicalJson([...x.schema_sha256].sort())
          )
        })
        .map((x) => x.name)
      if (changed.length > 0)
        changes.push(`${plural(changed.length, 'tool schema')} changed (${nameSet(changed)})`)
    } else changes.push(...setChanges(t.a.value as string[], t.b.value as string[], 'tool'))
  }
  if (t.a.known !== t.b.known || (t.a.known && t.b.known && (t.a.value === null || t.b.value === null)))
    unknown.push('tools')

  const fact = <K extends keyof ConfiguredCapabilities>(k: K) =>
    [a.configured[k].value, b.configured[k].value] as const
  const sets: [keyof ConfiguredCapabilities, string, string?][] = [
    ['disabled_tools', 'disabled tool'],
    ['skills', 'skill'],
    ['mcp_servers', 'MCP server'],
  ]
  for (const [k, one] of sets) {
    const [va, vb] = fact(k) as [string[] | null, string[] | null]
    if (va !== null && vb !== null) changes.push(...setChanges(va, vb, one))
    else if ((va === null) !== (vb === null)) unknown.push(k.replace('_', ' '))
  }
  const toggles: [keyof ConfiguredCapabilities, string][] = [
    ['compaction', 'compaction'],
    ['browser', 'browser'],
  ]
  for (const [k, word] of toggles) {
    const [va, vb] = fact(k) as [boolean | null, boolean | null]
    if (va !== null && vb !== null) {
      if (va !== vb) changes.push(`${word} ${onOff(vb)}`)
    } else if ((va === null) !== (vb === null)) unknown.push(word)
  }
  const values: [keyof ConfiguredCapabilities, string][] = [
    ['retry', 'retry'],
    ['permission_mode', 'permission mode'],
    ['iteration_limit', 'iteration limit'],
    ['request_routes', 'request routes'],
  ]
  for (const [k, word] of values) {
    const [va, vb] = fact(k)
    if (va !== null && vb !== null) {
      const sa = Array.isArray(va) ? va.join(', ') : String(va)
      const sb = Array.isArray(vb) ? vb.join(', ') : String(vb)
      if (sa !== sb) changes.push(`${word} ${sa} → ${sb}`)
    } else if ((va === null) !== (vb === null)) unknown.push(word)
  }
  if (a.observed && b.observed) {
    changes.push(...setChanges(a.observed.call_types, b.observed.call_types, 'call type'))
  }
  return { label, changes, unknown }
}

/** The one line of a diff, or null when nothing differs and nothing is unknown on one side. */
export function capabilityLine(d: CapabilityDiff, versionChanged = false): string | null {
  if (d.changes.length === 0 && d.unknown.length === 0 && !versionChanged) return null
  const what = d.changes.length > 0 ? d.changes.join(', ') : 'no capability change seen'
  const unknown = d.unknown.length > 0 ? `; unknown on one side: ${d.unknown.join(', ')}` : ''
  return `${d.label}: ${what}${unknown}`
}

const version = (c: CellCapabilities) => c.harness_version ?? 'version unknown'

/**
 * One line per cell that differs from the reference cell (the baseline), in cell order: e.g.
 * `baseline (pi 0.73.1) → treatment (opencode 1.18.33): +3 tools (…), compaction on`.
 */
export function betweenCells(cells: CellCapabilities[], reference: string | null): string[] {
  const ref = cells.find((c) => c.cell_id === reference) ?? cells[0]
  if (!ref) return []
  const out: string[] = []
  for (const c of cells) {
    if (c === ref) continue
    const label = `${ref.cell_id} (${ref.harness} ${version(ref)}) → ${c.cell_id} (${c.harness} ${version(c)})`
    const line = capabilityLine(diffCapabilities(ref, c, label))
    if (line) out.push(line)
  }
  return out
}

/**
 * One line per cell whose capabilities changed since the previous run (cells matched by id): e.g.
 * `opencode 1.18 → 1.19 (cell treatment): +3 tools (a, b, c), compaction on`. A version change alone is
 * listed too ("no capability change seen"); a cell new this run is not.
 */
export function betweenRuns(previous: CellCapabilities[], current: CellCapabilities[]): string[] {
  const out: string[] = []
  for (const c of current) {
    const p = previous.find((x) => x.cell_id === c.cell_id)
    if (!p) continue
    const harness =
      p.harness === c.harness
        ? `${c.harness} ${version(p)} → ${version(c)}`
        : `${p.harness} ${version(p)} → ${c.harness} ${version(c)}`
    const line = capabilityLine(
      diffCapabilities(p, c, `${harness} (cell ${c.cell_id})`),
      p.harness_version !== c.harness_version,
    )
    if (line) out.push(line)
  }
  return out
}
