import { createHash } from 'node:crypto'

/**
 * A uniform number in [0, 1) determined by `parts` (sha256 of their JSON, first 48 bits). The same
 * parts always give the same number, on every machine; it is how the scripted model decides success
 * and faults without keeping state.
 */
export function uniform(...parts: (string | number)[]): number {
  const hex = createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 12)
  return Number.parseInt(hex, 16) / 2 ** 48
}

/**
 * A stand-in for the cell when a request carries no `x-hw-cell` header: a fingerprint of the sorted
 * tool names, so two harnesses (different tool sets) get independent success draws on the same task.
 */
export function toolFingerprint(toolNames: string[]): string {
  const names = [...new Set(toolNames)].sort()
  return `tools:${createHash('sha256').update(names.join('\n')).digest('hex').slice(0, 12)}`
}
