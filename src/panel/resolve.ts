import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { InstanceId, type Manifest } from '../manifest/schema.js'
import { HwError } from '../util/errors.js'
import { builtinPanelsDir, quotePath } from '../util/paths.js'

/** Where a panel's instances come from, resolved to concrete locations. */
export interface ResolvedPanel {
  source: Manifest['panel']['source']
  /** Task folder root for `tasks` and `builtin` sources (absolute); null for id lists. */
  tasksDir: string | null
  /** Every instance id in the panel, in declared (or sorted folder) order, quarantined ones included. */
  instances: string[]
  /** Quarantined ids: run, reported, never compared. */
  quarantine: string[]
}

/**
 * Resolve the manifest's panel to instance ids. `manifestDir` anchors relative paths.
 * Throws HwError `panel_invalid` for a missing folder/file, an empty panel, a duplicate or a
 * malformed id (naming the file and line), or a subset/quarantine id that is not in the panel.
 */
export async function resolvePanel(
  m: Manifest,
  manifestDir: string,
  manifestFile = 'manifest',
  /** `file:line:column` of a manifest field (LoadedManifest.locate), to point at a bad list item. */
  locate?: (path: readonly PropertyKey[]) => string,
): Promise<ResolvedPanel> {
  const at = (field: 'instances' | 'quarantine', ids: readonly string[], bad: string[]): string[] =>
    bad.map((id) => {
      const p = ['panel', field, ids.indexOf(id)]
      return `${locate ? `${locate(p)} ` : ''}panel.${field}[${ids.indexOf(id)}]: "${id}" is not in the panel`
    })
  const p = m.panel
  let tasksDir: string | null = null
  let ids: string[]
  switch (p.source) {
    case 'inline':
      ids = p.instances ?? []
      break
    case 'file': {
      const file = path.resolve(manifestDir, p.file ?? '')
      ids = await readIdFile(file)
      break
    }
    case 'tasks':
    case 'builtin': {
      tasksDir =
        p.source === 'tasks'
          ? path.resolve(manifestDir, p.path ?? '')
          : path.join(builtinPanelsDir(), p.name ?? '')
      const isDir = (await stat(tasksDir).catch(() => null))?.isDirectory() === true
      if (!isDir) {
        // Blamed on the manifest field that names it; for a built-in panel, the ones that exist.
        const field = p.source === 'tasks' ? 'path' : 'name'
        const builtins = (await readdir(builtinPanelsDir(), { withFileTypes: true }).catch(() => []))
          .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
          .map((d) => d.name)
          .sort()
        throw new HwError(
          'panel_invalid',
          p.source === 'tasks'
            ? `panel.path: no folder ${quotePath(tasksDir)}`
            : `panel.name: there is no built-in panel "${p.name ?? ''}"`,
          {
            where: locate ? locate(['panel', field]) : quotePath(manifestFile),
            help:
              p.source === 'tasks'
                ? 'panel.path is a folder of task folders, relative to the manifest'
                : `built-in panels: ${builtins.join(', ') || '(none)'}`,
          },
        )
      }
      ids = await listTaskFolders(tasksDir)
      break
    }
  }
  if (p.source !== 'inline' && p.instances) {
    const known = new Set(ids)
    const missing = p.instances.filter((id) => !known.has(id))
    if (missing.length > 0) {
      throw new HwError(
        'panel_invalid',
        `panel.instances names ids not in the panel: ${missing.join(', ')}`,
        { where: quotePath(manifestFile), details: at('instances', p.instances, missing) },
      )
    }
    ids = p.instances
  }
  if (ids.length === 0) {
    throw new HwError('panel_invalid', 'the panel is empty: no instances to run', {
      where: manifestFile,
      help: 'list instances inline, in an id file, or point at a folder of task folders',
    })
  }
  const inPanel = new Set(ids)
  const strays = p.quarantine.filter((q) => !inPanel.has(q))
  if (strays.length > 0) {
    throw new HwError('panel_invalid', `panel.quarantine names ids not in the panel: ${strays.join(', ')}`, {
      where: quotePath(manifestFile),
      details: at('quarantine', p.quarantine, strays),
    })
  }
  if (ids.every((id) => p.quarantine.includes(id))) {
    throw new HwError('panel_invalid', 'the panel is empty after quarantine: every instance is quarantined', {
      where: locate ? locate(['panel', 'quarantine']) : quotePath(manifestFile),
      help: 'quarantined instances run but are never compared: leave at least one instance out of panel.quarantine',
    })
  }
  return { source: p.source, tasksDir, instances: ids, quarantine: p.quarantine }
}

/** An id file: a JSON array of strings, or one id per line (# comments and blank lines ignored). */
export async function readIdFile(file: string): Promise<string[]> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError(
      'panel_invalid',
      `cannot read the panel id file (${(e as NodeJS.ErrnoException).code})`,
      {
        where: file,
      },
    )
  }
  const entries: { id: unknown; line: number }[] = []
  if (text.trimStart().startsWith('[')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch (e) {
      throw new HwError('panel_invalid', `not valid JSON: ${(e as Error).message}`, { where: file })
    }
    if (!Array.isArray(parsed))
      throw new HwError('panel_invalid', 'expected a JSON array of ids', { where: file })
    parsed.forEach((id, i) => {
      entries.push({ id, line: i + 1 })
    })
  } else {
    text.split(/\r?\n/).forEach((raw, i) => {
      const s = raw.replace(/#.*$/, '').trim()
      if (s) entries.push({ id: s, line: i + 1 })
    })
  }
  const seen = new Map<string, number>()
  const ids: string[] = []
  const json = text.trimStart().startsWith('[')
  for (const { id, line } of entries) {
    const where = json ? `${file} [${line - 1}]` : `${file}:${line}`
    const ok = InstanceId.safeParse(id)
    if (!ok.success) {
      throw new HwError(
        'panel_invalid',
        `bad instance id ${JSON.stringify(id)}: ${ok.error.issues[0]?.message}`,
        {
          where,
        },
      )
    }
    const first = seen.get(ok.data)
    if (first !== undefined) {
      throw new HwError('panel_invalid', `duplicate instance id "${ok.data}" (first at line ${first})`, {
        where,
      })
    }
    seen.set(ok.data, line)
    ids.push(ok.data)
  }
  return ids
}

/** Sub-folders that look like Harbor tasks (instruction.md present), sorted by name. */
export async function listTaskFolders(dir: string): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (e) {
    throw new HwError('panel_invalid', `cannot read the task folder (${(e as NodeJS.ErrnoException).code})`, {
      where: dir,
    })
  }
  const ids: string[] = []
  const incomplete: string[] = []
  for (const name of names.sort()) {
    if (name.startsWith('.')) continue
    if (!(await stat(path.join(dir, name)).catch(() => null))?.isDirectory()) continue
    const s = await stat(path.join(dir, name, 'instruction.md')).catch(() => null)
    // A task folder is graded by its tests (or, for a bridge task, by the graders of its environment
    // file): one without task.toml or what grades it cannot be run.
    const hasToml = (await stat(path.join(dir, name, 'task.toml')).catch(() => null))?.isFile() ?? false
    const bridge = hasToml && (await isBridgeTask(path.join(dir, name, 'task.toml')))
    const graded = bridge
      ? (await stat(path.join(dir, name, 'environment', 'bridge.json')).catch(() => null))?.isFile()
        ? null
        : 'environment/bridge.json'
      : (await stat(path.join(dir, name, 'tests')).catch(() => null))?.isDirectory()
        ? null
        : 'tests/'
    const missing = [s?.isFile() ? null : 'instruction.md', hasToml ? null : 'task.toml', graded].filter(
      (x): x is string => x !== null,
    )
    if (missing.length > 0) {
      incomplete.push(`${quotePath(path.join(dir, name))}: no ${missing.join(', ')}`)
      continue
    }
    if (s?.isFile()) {
      const ok = InstanceId.safeParse(name)
      if (!ok.success) {
        throw new HwError(
          'panel_invalid',
          `task folder name is not a valid instance id: ${ok.error.issues[0]?.message}`,
          {
            where: path.join(dir, name),
          },
        )
      }
      ids.push(name)
    }
  }
  if (incomplete.length > 0) {
    throw new HwError('panel_invalid', `${incomplete.length} task folder(s) are incomplete`, {
      where: quotePath(dir),
      details: incomplete,
      help: 'a Harbor task folder holds instruction.md, task.toml and tests/ (see manifests/panels/core); a bridge task ([hw] kind = "bridge") holds environment/bridge.json instead of tests/ (see manifests/panels/bridge-tools)',
    })
  }
  return ids
}

/** Whether a task.toml declares a bridge task (`[hw] kind = "bridge"`); a file that does not parse is left to loadTask. */
async function isBridgeTask(tomlFile: string): Promise<boolean> {
  try {
    const toml = parseToml(await readFile(tomlFile, 'utf8')) as { hw?: { kind?: unknown } }
    return toml.hw?.kind === 'bridge'
  } catch {
    return false
  }
}
