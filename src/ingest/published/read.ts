import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { HwError } from '../../util/errors.js'
import { sha256 } from '../../util/json.js'
import { zodMessage } from '../jsonl.js'
import {
  detectFormat,
  fromOpenHands,
  fromResolvedList,
  fromTerminalBench,
  OpenHandsInstanceResultsSchema,
  OpenHandsMetadataSchema,
  type PublishedSystem,
  SwebenchResolvedListSchema,
  TerminalBenchSchema,
} from './formats.js'

const FORMATS_HELP =
  'supported: a SWE-bench style {resolved: [ids], cost_usd: {...}} file, an OpenHands index instance_results/<benchmark>.json, or a Terminal-Bench per-task file with file#system'

/**
 * Read one published system from `spec` = `<file>` or `<file>#<system>` (the selector picks a system
 * in a multi-system file such as Terminal-Bench's). Returns the system and the file's sha256.
 * Throws HwError `published_unreadable` / `published_invalid` (with the schema problem) /
 * `published_system` (unknown or missing selector, listing the systems in the file; a selector on a
 * one-system file).
 */
export async function readPublished(
  spec: string,
): Promise<{ system: PublishedSystem; sha256: string; file: string }> {
  const hash = spec.lastIndexOf('#')
  const file = hash > 0 ? spec.slice(0, hash) : spec
  const selector = hash > 0 ? spec.slice(hash + 1) : null
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError('published_unreadable', `cannot read: ${(e as NodeJS.ErrnoException).code ?? e}`, {
      where: file,
      help: FORMATS_HELP,
    })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    throw new HwError('published_invalid', `not valid JSON: ${(e as Error).message}`, {
      where: file,
      help: FORMATS_HELP,
    })
  }
  const format = detectFormat(json)
  const base = path.basename(file).replace(/\.json$/i, '')
  const invalid = (msg: string) => new HwError('published_invalid', msg, { where: file, help: FORMATS_HELP })
  // Only multi-system files take a selector; silently ignoring one would compare another system.
  if (selector !== null && format !== null && format !== 'terminal-bench-per-task') {
    throw new HwError('published_system', `this file holds one system; drop #${selector}`, {
      where: file,
      help: `pass ${file} without a #<system> selector`,
    })
  }
  switch (format) {
    case 'swebench-resolved-list': {
      const v = SwebenchResolvedListSchema.safeParse(json)
      if (!v.success) throw invalid(zodMessage(v.error))
      return { system: fromResolvedList(v.data, spec, base), sha256: sha256(text), file }
    }
    case 'openhands-instance-results': {
      const v = OpenHandsInstanceResultsSchema.safeParse(json)
      if (!v.success) throw invalid(zodMessage(v.error))
      // <system>/instance_results/<benchmark>.json → <system>/metadata.json names the agent and model.
      const systemDir = path.dirname(path.dirname(path.resolve(file)))
      const metaText = await readFile(path.join(systemDir, 'metadata.json'), 'utf8').catch(() => null)
      let meta = null
      if (metaText !== null) {
        try {
          const parsed = OpenHandsMetadataSchema.safeParse(JSON.parse(metaText))
          meta = parsed.success ? parsed.data : null
        } catch {
          meta = null
        }
      }
      // Named by its system folder (<system>/instance_results/…), the file's base name otherwise.
      const inIndex = path.basename(path.dirname(path.resolve(file))) === 'instance_results'
      const name = meta || inIndex ? path.basename(systemDir) : base
      return { system: fromOpenHands(v.data, meta, spec, name, base), sha256: sha256(text), file }
    }
    case 'terminal-bench-per-task': {
      const v = TerminalBenchSchema.safeParse(json)
      if (!v.success) throw invalid(zodMessage(v.error))
      const names = Object.keys(v.data.systems).sort()
      if (selector === null || !(selector in v.data.systems)) {
        throw new HwError(
          'published_system',
          selector === null
            ? 'the file holds several systems: choose one with <file>#<system>'
            : `no system "${selector}" in the file`,
          {
            where: file,
            details: [`systems: ${names.join(', ')}`],
            help: `e.g. ${file}#${names[0] ?? 'name'}`,
          },
        )
      }
      return { system: fromTerminalBench(v.data, selector, spec), sha256: sha256(text), file }
    }
    default:
      throw invalid(
        `not a per-instance results file this command knows: expected a top-level "resolved" array, a "systems" object, or {instance id: {resolved, cost}} records; ${describeTop(json)}`,
      )
  }
}

/** The top level of a JSON value, for an error message: its keys or its type. */
function describeTop(json: unknown): string {
  if (json === null || typeof json !== 'object') return `got ${json === null ? 'null' : typeof json}`
  if (Array.isArray(json)) return `got an array of ${json.length}`
  const keys = Object.keys(json)
  if (keys.length === 0) return 'got an empty object'
  return `got keys ${keys
    .slice(0, 8)
    .map((k) => JSON.stringify(k))
    .join(', ')}${keys.length > 8 ? `, … ${keys.length - 8} more` : ''}`
}
