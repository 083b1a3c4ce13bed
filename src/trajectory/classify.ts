import { createHash } from 'node:crypto'
import type { EventKind } from './schema.js'

/**
 * Kind of a tool call from the tool's name as the harness named it (case- and separator-insensitive),
 * then, for shell tools, from the command line. Pure tables: a harness's tool names are listed in
 * the harness design notes (§3.1, tool vocabularies) and the mappers' tests.
 */
const BY_NAME: Record<string, EventKind> = {}
function names(kind: EventKind, list: string[]): void {
  for (const n of list) BY_NAME[n] = kind
}
names('read', ['read', 'readfile', 'view', 'readmanyfiles', 'viewimage', 'zoomimage', 'fileread', 'cat'])
names('search', [
  'grep',
  'glob',
  'grepsearch',
  'search',
  'find',
  'listdirectory',
  'ls',
  'codesearch',
  'filesearch',
])
names('edit', [
  'edit',
  'write',
  'writefile',
  'replace',
  'create',
  'multiedit',
  'applypatch',
  'strreplace',
  'strreplaceeditor',
  'strreplacebasededittool',
  'notebookedit',
  'fileeditor',
  'fileedit',
  'filewrite',
])
names('run', [
  'bash',
  'shell',
  'runshellcommand',
  'execcommand',
  'shellcommand',
  'terminal',
  'executebash',
  'commandexecution',
  'localshell',
  'run',
  'writestdin',
  'readbash',
])
names('browse', ['webfetch', 'websearch', 'googlewebsearch', 'fetch', 'browser', 'browse'])
names('delegate', ['task', 'agent', 'spawnagent', 'invokeagent', 'delegate', 'sendmessage', 'writeagent'])
names('plan', [
  'todowrite',
  'todoread',
  'updateplan',
  'enterplanmode',
  'exitplanmode',
  'updatetopic',
  'creategoal',
  'updategoal',
  'think',
  'taskcreate',
])
names('finish', ['finish', 'submit', 'attemptcompletion'])

function normName(name: string): string {
  // Namespaced tools (mcp__server__tool, multi_agent_v1.spawn_agent) are judged by their last part.
  const last = name.split(/__|\./).pop() ?? name
  return last.toLowerCase().replace(/[^a-z0-9]/g, '')
}

/** Kind of a tool by name alone; null when the name is not in the table. */
export function kindOfToolName(name: string): EventKind | null {
  const n = normName(name)
  if (BY_NAME[n]) return BY_NAME[n]
  if (/bash|shell|terminal|exec/.test(n)) return 'run'
  if (/^(mcp)?.*(read|view)/.test(n)) return 'read'
  if (/grep|glob|search/.test(n)) return 'search'
  if (/edit|write|patch/.test(n)) return 'edit'
  if (/web|browser|fetch/.test(n)) return 'browse'
  return null
}

const TEST_CMD =
  /(^|[\s;&|(])(pytest|py\.test|vitest|jest|mocha|tox|nox|phpunit|rspec|ctest)\b|python3? -m (pytest|unittest)|node --test|npm (run )?test|npx (vitest|jest|mocha)|yarn test|pnpm test|go test|cargo test|make (check|test)|(^|\/)tests?\/[\w./-]*\.(sh|py)\b|\bbun test\b/
const READ_CMD = /^(cat|head|tail|less|more|nl|bat|sed -n|awk)\b/
const SEARCH_CMD = /^(grep|rg|ag|ack|find|fd|ls|tree|git (grep|ls-files|log|show|diff|status))\b/
const EDIT_CMD =
  /^(sed -i|perl -pi|patch|git apply|apply_patch|tee|cp|mv|touch|mkdir|rm)\b|(^|[^>&\d])>>?\s*[\w./-]+\s*$|<<\s*['"]?EOF/

/** The command with a login-shell wrapper removed (`bash -lc '…'`, `/bin/sh -c "…"`). */
export function unwrapShell(command: string): string {
  const m = /^\s*(?:\/\S*\/)?(?:ba|z|da)?sh\s+-l?c\s+(['"])([\s\S]*)\1\s*$/.exec(command)
  return (m ? (m[2] ?? '') : command).trim()
}

/**
 * Kind of a shell command: `test` for a test runner, `read` / `search` / `edit` for the usual file
 * utilities, else `run`. The first segment of a `cd x && …` chain is skipped.
 */
export function kindOfCommand(command: string): EventKind {
  const cmd = unwrapShell(command)
  if (TEST_CMD.test(cmd)) return 'test'
  const first = cmd.replace(/^(cd\s+\S+\s*(&&|;)\s*)+/, '').trim()
  if (EDIT_CMD.test(first)) return 'edit'
  if (READ_CMD.test(first)) return 'read'
  if (SEARCH_CMD.test(first)) return 'search'
  return 'run'
}

/** Files named by a read/edit command (`cat a b`, `sed -n 1,5p f`, `echo x > f`). */
export function pathsOfCommand(command: string): string[] {
  const cmd = unwrapShell(command).replace(/^(cd\s+\S+\s*(&&|;)\s*)+/, '')
  const out: string[] = []
  const redirect = />>?\s*([\w./-]+)\s*$/.exec(cmd)
  if (redirect?.[1]) out.push(redirect[1])
  const m = /^(cat|head|tail|nl|less|more|sed -n \S+|sed -i(?:\s+\S+)?|touch|rm)\s+(.+)$/.exec(cmd)
  if (m?.[2]) {
    for (const tok of m[2].split(/\s+/)) {
      if (/^[|;&>]/.test(tok)) break
      if (!tok.startsWith('-') && /[\w]/.test(tok) && !/^\d+(,\d+)?p?$/.test(tok))
        out.push(tok.replace(/^['"]|['"]$/g, ''))
    }
  }
  return [...new Set(out)]
}

const PATH_KEYS = [
  'path',
  'file_path',
  'filePath',
  'absolute_path',
  'file',
  'filename',
  'target_file',
  'notebook_path',
  'dir_path',
  'directory',
]

/** Paths named in a tool's arguments (the usual argument names; `paths` / `files` lists too). */
export function pathsOfArgs(args: unknown): string[] {
  if (!args || typeof args !== 'object') return []
  const a = args as Record<string, unknown>
  const out: string[] = []
  for (const k of PATH_KEYS) if (typeof a[k] === 'string' && a[k] !== '') out.push(a[k] as string)
  for (const k of ['paths', 'files', 'absolute_paths']) {
    const v = a[k]
    if (Array.isArray(v)) for (const p of v) if (typeof p === 'string') out.push(p)
  }
  return [...new Set(out)]
}

/** The shell command in a tool's arguments (`command`, `cmd`, a `["bash","-lc",cmd]` array). */
export function commandOfArgs(args: unknown): string | null {
  if (!args || typeof args !== 'object') return null
  const a = args as Record<string, unknown>
  for (const k of ['command', 'cmd', 'script', 'commands']) {
    const v = a[k]
    if (typeof v === 'string') return v
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) {
      const parts = v as string[]
      return parts.length === 3 && /sh$/.test(parts[0] ?? '') && /^-l?c$/.test(parts[1] ?? '')
        ? (parts[2] ?? '')
        : parts.join(' ')
    }
  }
  return null
}

/** Size (UTF-8 bytes) and sha256 of a tool output; both null when there is no output text. */
export function outputDigest(text: string | null | undefined): { bytes: number | null; sha: string | null } {
  if (typeof text !== 'string') return { bytes: null, sha: null }
  return { bytes: Buffer.byteLength(text), sha: createHash('sha256').update(text).digest('hex') }
}

/** Message text kept in an event: one trimmed string of at most 500 characters. */
export function clip(text: string | null | undefined): string | null {
  if (typeof text !== 'string') return null
  const t = text.trim()
  return t.length > 500 ? `${t.slice(0, 499)}…` : t
}

/** UTC ms of an ISO string, epoch ms or epoch seconds (< 1e11); null otherwise. */
export function timeOf(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v < 1e11 ? Math.round(v * 1000) : v
  if (typeof v === 'string' && v !== '') {
    // Python writes ISO times without a zone: they are UTC.
    const s = /[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`
    const t = Date.parse(s)
    return Number.isFinite(t) ? t : null
  }
  return null
}
