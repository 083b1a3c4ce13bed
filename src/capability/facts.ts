import type { WireApi } from '../manifest/harness-names.js'
import type { CapabilityName, ConfiguredCapabilities } from '../records/capabilities.js'
import { CAPABILITY_NAMES } from '../records/capabilities.js'

/** What a capability reader gets: the harness's invocation and its config files, as the adapter wrote them. */
export interface CapabilityInput {
  /** The attempt's home, where the adapter wrote the harness's config files. */
  home: string
  /** The attempt's workspace (project-level settings and skills live there); absent: not read. */
  workspace?: string
  /** The command's arguments, without the task prompt (text of a task is never read as a flag). */
  args: string[]
  /** The invocation's environment: only named switches are read, never stored. */
  env: Record<string, string>
  /** The wire API the cell speaks. */
  api: WireApi
}

/** A harness's capability reader: its own configuration → capabilities, unknown where it cannot tell. */
export type CapabilityReader = (input: CapabilityInput) => Promise<ConfiguredCapabilities>

type Fact<K extends CapabilityName> = ConfiguredCapabilities[K]

export const known = <K extends CapabilityName>(
  value: NonNullable<Fact<K>['value']>,
  from: string,
): Fact<K> => ({ value, from }) as Fact<K>

export const unknown = <K extends CapabilityName>(from: string): Fact<K> => ({ value: null, from }) as Fact<K>

/** Every capability unknown, each saying why; readers start from it and fill what they can read. */
export function allUnknown(why: string): ConfiguredCapabilities {
  const out = {} as Record<CapabilityName, { value: null; from: string }>
  for (const name of CAPABILITY_NAMES) out[name] = { value: null, from: why }
  return out as ConfiguredCapabilities
}

/**
 * The value of a command-line option (`--name value` or `--name=value`; the last one wins), or null
 * when the arguments do not set it.
 */
export function flagValue(args: string[], names: string[]): string | null {
  let out: string | null = null
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string
    for (const n of names) {
      if (a === n && i + 1 < args.length) out = args[i + 1] as string
      else if (a.startsWith(`${n}=`)) out = a.slice(n.length + 1)
    }
  }
  return out
}

/** Every value of a repeatable option, in order. */
export function flagValues(args: string[], names: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string
    for (const n of names) {
      if (a === n && i + 1 < args.length) out.push(args[i + 1] as string)
      else if (a.startsWith(`${n}=`)) out.push(a.slice(n.length + 1))
    }
  }
  return out
}

export const hasFlag = (args: string[], names: string[]): boolean => args.some((a) => names.includes(a))

/** A comma- or space-separated list of names, trimmed, empty entries dropped, sorted and unique. */
export function nameList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[,\s]+/)
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ].sort()
}

/** A positive whole number written as text, or null. */
export function positiveInt(text: string | null | undefined): number | null {
  if (text === null || text === undefined || !/^\d{1,9}$/.test(text.trim())) return null
  const n = Number(text.trim())
  return n > 0 ? n : null
}

export type Obj = Record<string, unknown>
export const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null
