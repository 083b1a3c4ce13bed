import { readFile } from 'node:fs/promises'
import { HwError } from '../../errors.js'
import { type WrittenReports, writeReports } from '../aggregate.js'
import { publishedInput } from './input.js'
import { readPublished } from './read.js'

export interface ComparePublishedOptions {
  baseline: string
  treatment: string
  out: string
  /** File with the panel: a JSON array of ids or one id per line. Default: the union of both files. */
  instances?: string
  ungraded?: 'unresolved' | 'exclude'
  resamples?: number
  seed?: number
}

/**
 * `harness-watch compare`: two published systems' per-instance files → comparison.json, report.md and
 * report.html, through the same blocks and statistics as an experiment. Throws HwError for unreadable
 * or unknown files (see readPublished) and an unreadable instance list.
 */
export async function comparePublished(opts: ComparePublishedOptions): Promise<WrittenReports> {
  const a = await readPublished(opts.baseline)
  const b = await readPublished(opts.treatment)
  const instances = opts.instances ? await readInstanceList(opts.instances) : undefined
  const inputs = [
    { path: a.file.split(/[\\/]/).pop() ?? a.file, sha256: a.sha256 },
    { path: b.file.split(/[\\/]/).pop() ?? b.file, sha256: b.sha256 },
  ]
  const input = publishedInput(a.system, b.system, {
    instances,
    ungraded: opts.ungraded,
    resamples: opts.resamples,
    seed: opts.seed,
    inputs,
  })
  return writeReports(input, opts.out)
}

/** A JSON array of ids, or one id per line (blank lines and `#` comments skipped). */
export async function readInstanceList(file: string): Promise<string[]> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError('instances_unreadable', `cannot read: ${(e as NodeJS.ErrnoException).code ?? e}`, {
      where: file,
    })
  }
  const trimmed = text.trim()
  if (trimmed.startsWith('[')) {
    let v: unknown
    try {
      v = JSON.parse(trimmed)
    } catch (e) {
      throw new HwError('instances_invalid', `not valid JSON: ${(e as Error).message}`, { where: file })
    }
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
      throw new HwError('instances_invalid', 'expected a JSON array of instance ids (strings)', {
        where: file,
      })
    }
    return [...new Set(v as string[])].sort()
  }
  const ids = trimmed
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
  return [...new Set(ids)].sort()
}
