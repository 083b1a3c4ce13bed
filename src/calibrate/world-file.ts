import type { RatioMetric } from '../detect/effects.js'
import { HwError } from '../util/errors.js'
import { RATIO_KEYS, type World, type WorldInstance } from './scenario.js'

/**
 * A user's world for `calibrate --world <file.jsonl>`: one JSON object per line,
 *   {"instance": "<id>", "p": [p_baseline, p_treatment],
 *    "spend_usd": [mean_baseline, mean_treatment], "input_fresh_tokens": [..], "requests": [..]}
 * — resolve probabilities in [0, 1] and expected costs per attempt (> 0) of each arm; the cost fields
 * are optional, but a field present on one line must be present on every line (a rule is calibrated
 * only for the resources the file gives). Blank lines are skipped. Every instance must be in the
 * manifest's panel, once. Errors name the file, the line and the field; nothing is dropped silently.
 */

/** The file's resource fields and the metric each one is. */
const FIELDS: Array<[string, RatioMetric]> = [
  ['spend_usd', 'spend_usd'],
  ['input_fresh_tokens', 'input_fresh_tokens'],
  ['requests', 'proxy_requests'],
]
const KNOWN = new Set(['instance', 'p', ...FIELDS.map(([f]) => f)])

export interface WorldFile {
  file: string
  instances: Array<{ id: string; p: [number, number]; mean: Partial<Record<RatioMetric, [number, number]>> }>
  /** Resources the file gives (the rules it calibrates besides the resolve rate). */
  metrics: RatioMetric[]
}

function fail(file: string, line: number, field: string | null, message: string, help?: string): never {
  throw new HwError('calibrate_world_invalid', `${field ? `${field}: ` : ''}${message}`, {
    where: `${file}:${line}`,
    ...(help ? { help } : {}),
  })
}

function pair(
  file: string,
  line: number,
  field: string,
  v: unknown,
  check: (x: number) => string | null,
): [number, number] {
  if (!Array.isArray(v) || v.length !== 2)
    fail(file, line, field, `expected [baseline, treatment], got ${JSON.stringify(v)?.slice(0, 60)}`)
  const out: number[] = []
  v.forEach((x, i) => {
    const side = i === 0 ? 'baseline' : 'treatment'
    if (typeof x !== 'number' || !Number.isFinite(x))
      fail(
        file,
        line,
        `${field}[${i}]`,
        `the ${side} value must be a finite number, got ${JSON.stringify(x)}`,
      )
    const why = check(x)
    if (why) fail(file, line, `${field}[${i}]`, `the ${side} value ${x} ${why}`)
    out.push(x)
  })
  return out as [number, number]
}

/** Parse a world file's text against the panel. Throws an HwError located at file:line and field. */
export function parseWorldFile(text: string, file: string, panel: readonly string[]): WorldFile {
  const inPanel = new Set(panel)
  const seen = new Map<string, number>()
  const instances: WorldFile['instances'] = []
  let fields: string[] | null = null
  let firstLine = 0
  const lines = text.split(/\r?\n/)
  lines.forEach((raw, i) => {
    const line = i + 1
    if (raw.trim() === '') return
    let row: unknown
    try {
      row = JSON.parse(raw)
    } catch (e) {
      fail(file, line, null, `not a JSON object: ${(e as Error).message}`)
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row))
      fail(file, line, null, 'expected a JSON object per line')
    const r = row as Record<string, unknown>
    for (const k of Object.keys(r))
      if (!KNOWN.has(k))
        fail(file, line, k, `unknown field (expected instance, p, ${FIELDS.map(([f]) => f).join(', ')})`)
    const id = r.instance
    if (typeof id !== 'string' || id === '') fail(file, line, 'instance', 'must be a non-empty string')
    if (!inPanel.has(id))
      fail(
        file,
        line,
        'instance',
        `"${id.slice(0, 80)}" is not in the manifest's panel`,
        'list only panel instances',
      )
    const before = seen.get(id)
    if (before !== undefined)
      fail(file, line, 'instance', `"${id.slice(0, 80)}" appears twice (first on line ${before})`)
    seen.set(id, line)
    if (!('p' in r)) fail(file, line, 'p', 'missing: [p_baseline, p_treatment] is required')
    const p = pair(file, line, 'p', r.p, (x) => (x >= 0 && x <= 1 ? null : 'is not a probability in [0, 1]'))
    const present = FIELDS.map(([f]) => f).filter((f) => f in r)
    if (fields === null) {
      fields = present
      firstLine = line
    } else if (present.join() !== fields.join()) {
      const missing = fields.filter((f) => !present.includes(f))
      const extra = present.filter((f) => !fields!.includes(f))
      const field = missing[0] ?? extra[0] ?? null
      fail(
        file,
        line,
        field,
        missing.length > 0
          ? `missing here but given on line ${firstLine}: every line gives the same resources`
          : `given here but not on line ${firstLine}: every line gives the same resources`,
      )
    }
    const mean: WorldFile['instances'][number]['mean'] = {}
    for (const [f, m] of FIELDS) {
      if (!(f in r)) continue
      mean[m] = pair(file, line, f, r[f], (x) => (x > 0 ? null : 'must be a mean cost > 0'))
    }
    instances.push({ id, p, mean })
  })
  if (instances.length === 0)
    throw new HwError('calibrate_world_invalid', 'the world file has no instance', { where: file })
  const metrics = FIELDS.filter(([f]) => (fields ?? []).includes(f)).map(([, m]) => m)
  return { file, instances, metrics }
}

/**
 * The world as the simulation draws it: resources the file does not give are A/A placeholders (their
 * rules are not reported). `noise` is σ per arm on the log scale.
 */
export function worldOf(w: WorldFile, noise: [number, number]): World {
  const instances: WorldInstance[] = w.instances.map((x) => {
    const mean = {} as WorldInstance['mean']
    for (const m of RATIO_KEYS) mean[m] = x.mean[m] ?? [1, 1]
    return { id: x.id, p: x.p, mean }
  })
  return { instances, noise }
}
