import { readFile } from 'node:fs/promises'
import { checkResamples } from '../compare/options.js'
import { checkPanel, publishedInput } from '../ingest/published/input.js'
import { readPublished } from '../ingest/published/read.js'
import { InstanceId } from '../manifest/schema.js'
import { HwError } from '../util/errors.js'
import { type WrittenReports, writeReports } from './aggregate.js'

export interface ComparePublishedOptions {
  baseline: string
  treatment: string
  out: string
  /** File with the panel: a JSON array of ids or one id per line. Default: the union of both files. */
  instances?: string
  ungraded?: 'unresolved' | 'exclude'
  resamples?: number
  seed?: number
  /** Leave out (and list) resolved ids outside `instances` instead of refusing them. */
  ignoreUnknownIds?: boolean
}

/**
 * `harness-watch compare`: two published systems' per-instance files → comparison.json, report.md and
 * report.html, through the same blocks and statistics as an experiment. Returns the written reports
 * and `warnings`: panel disagreements short of an error (also in the report's notes), for the terminal.
 * Throws HwError for unreadable or unknown files (see readPublished), an unreadable instance list, and
 * `published_panel` when a resolved list's n_total disagrees with the panel (see checkPanel).
 */
export async function comparePublished(
  opts: ComparePublishedOptions,
): Promise<WrittenReports & { warnings: string[] }> {
  checkResamples(opts.resamples)
  const a = await readPublished(opts.baseline)
  const b = await readPublished(opts.treatment)
  const instances = opts.instances ? await readInstanceList(opts.instances) : undefined
  const inputs = [
    { path: a.file.split(/[\\/]/).pop() ?? a.file, sha256: a.sha256 },
    { path: b.file.split(/[\\/]/).pop() ?? b.file, sha256: b.sha256 },
  ]
  const panel = instances ?? [...new Set([...a.system.instances.keys(), ...b.system.instances.keys()])].sort()
  const { warnings } = checkPanel([a.system, b.system], panel, instances !== undefined, opts.ignoreUnknownIds)
  const input = publishedInput(a.system, b.system, {
    instances,
    ignoreUnknownIds: opts.ignoreUnknownIds,
    ungraded: opts.ungraded,
    resamples: opts.resamples,
    seed: opts.seed,
    inputs,
  })
  return { ...(await writeReports(input, opts.out)), warnings }
}

/**
 * The panel for `compare --instances`: a JSON array of ids, or one id per line (blank lines and `#`
 * comments skipped). Every id must follow the instance-id rule (no "/", no "..": ids name folders)
 * and appear once. Returns the ids sorted. Throws HwError `instances_unreadable`, or
 * `instances_invalid` naming the line (or array index) of a bad or repeated id.
 */
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
  const entries: Array<{ id: unknown; where: string }> = []
  if (trimmed.startsWith('[')) {
    let v: unknown
    try {
      v = JSON.parse(trimmed)
    } catch (e) {
      throw new HwError('instances_invalid', `not valid JSON: ${(e as Error).message}`, { where: file })
    }
    if (!Array.isArray(v)) {
      throw new HwError('instances_invalid', 'expected a JSON array of instance ids (strings)', {
        where: file,
      })
    }
    v.forEach((id, i) => {
      entries.push({ id, where: `${file} [${i}]` })
    })
  } else {
    text.split(/\r?\n/).forEach((raw, i) => {
      const id = raw.trim()
      if (id && !id.startsWith('#')) entries.push({ id, where: `${file}:${i + 1}` })
    })
  }
  const seen = new Map<string, string>()
  for (const { id, where } of entries) {
    if (typeof id !== 'string') {
      throw new HwError(
        'instances_invalid',
        `expected an instance id (a string), got ${JSON.stringify(id)}`,
        {
          where,
        },
      )
    }
    const ok = InstanceId.safeParse(id)
    if (!ok.success) {
      throw new HwError(
        'instances_invalid',
        `bad instance id ${JSON.stringify(id)}: ${ok.error.issues[0]?.message}`,
        {
          where,
          help: 'instance ids are benchmark task ids such as django__django-11099',
        },
      )
    }
    const first = seen.get(id)
    if (first !== undefined) {
      throw new HwError('instances_invalid', `duplicate instance id "${id}" (first at ${first})`, {
        where,
        help: 'list each instance once',
      })
    }
    seen.set(id, where)
  }
  if (seen.size === 0) {
    throw new HwError('instances_invalid', 'lists no instances: a comparison needs at least one', {
      where: file,
      help: 'a JSON array of instance ids, or one id per line',
    })
  }
  return [...seen.keys()].sort()
}
