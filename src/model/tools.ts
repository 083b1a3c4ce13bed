import type { OfferedTool, Schema } from './types.js'

// Shell tool names of the known harnesses, most specific first: Pi/OpenCode/Copilot `bash`, Claude
// Code `Bash`, Codex `exec_command`/`shell`/`local_shell`, Gemini/Qwen `run_shell_command`.
const SHELL_NAMES = [
  'bash',
  'shell',
  'exec_command',
  'run_shell_command',
  'shell_command',
  'local_shell',
  'run_command',
  'execute_command',
  'run_terminal_cmd',
  'terminal',
  'exec',
  'command',
]
const READ_NAMES = ['read', 'read_file', 'view', 'open_file', 'readfile', 'cat']
const COMMAND_PROPS = ['command', 'cmd', 'commands', 'script', 'code', 'input']
const PATH_PROPS = ['path', 'file_path', 'filePath', 'absolute_path', 'file', 'filename', 'target_file']

// Free-form grammar tools (Responses `custom`) and hosted tools take no JSON arguments we can fill.
function callable(t: OfferedTool): boolean {
  return t.kind === 'local_shell' || t.schema !== null
}

/**
 * The harness's shell tool: a known name (case-insensitive), else a name matching bash/shell/exec/
 * terminal/command, else a description mentioning bash or shell. Null when there is none.
 */
export function findShellTool(tools: OfferedTool[]): OfferedTool | null {
  const usable = tools.filter(callable)
  for (const n of SHELL_NAMES) {
    const t = usable.find((x) => x.name.toLowerCase() === n)
    if (t) return t
  }
  return (
    usable.find((x) => /bash|shell|exec|terminal|command/i.test(x.name)) ??
    usable.find((x) => /\b(bash|shell)\b/i.test(x.description)) ??
    null
  )
}

/**
 * The harness's file-read tool (a known name, else `read…`/`view…` with a path parameter; image viewers
 * excluded), or null.
 */
export function findReadTool(tools: OfferedTool[]): OfferedTool | null {
  // Codex offers `view_image {path}`: a viewer of images, not of source files.
  const usable = tools.filter(
    (t) => t.schema !== null && pathProp(t.schema) !== null && !/image|img|screenshot|pdf/i.test(t.name),
  )
  for (const n of READ_NAMES) {
    const t = usable.find((x) => x.name.toLowerCase() === n)
    if (t) return t
  }
  return usable.find((x) => /^(read|view)/i.test(x.name) && !/write|edit/i.test(x.name)) ?? null
}

/**
 * Arguments running `command` through `tool`, shaped as its schema wants: the command goes in
 * `command`/`cmd`/`commands`/`script`/`code`/`input` (else the first required string), as a string or,
 * for an array-typed property, `["bash","-lc",command]`. Other required properties get plain values
 * (OpenCode's bash requires `description`). `local_shell` takes `{command: [...]}`.
 */
export function shellArgs(tool: OfferedTool, command: string, purpose: string): Record<string, unknown> {
  if (tool.kind === 'local_shell') return { command: ['bash', '-lc', command] }
  const props = propsOf(tool.schema)
  const required = requiredOf(tool.schema)
  const names = Object.keys(props)
  const cmdProp =
    COMMAND_PROPS.find((n) => n in props) ??
    names.find((n) => required.has(n) && typeOf(props[n]) === 'string') ??
    'command'
  const args: Record<string, unknown> = {
    [cmdProp]: typeOf(props[cmdProp]) === 'array' ? ['bash', '-lc', command] : command,
  }
  fillRequired(args, props, required, purpose)
  return args
}

/** Arguments reading `file` with `tool` (its path parameter, other required properties filled). */
export function readArgs(tool: OfferedTool, file: string, purpose: string): Record<string, unknown> {
  const props = propsOf(tool.schema)
  const args: Record<string, unknown> = { [pathProp(tool.schema) ?? 'path']: file }
  fillRequired(args, props, requiredOf(tool.schema), purpose)
  return args
}

function fillRequired(
  args: Record<string, unknown>,
  props: Record<string, Schema>,
  required: Set<string>,
  purpose: string,
): void {
  for (const n of Object.keys(props)) {
    if (n in args || !required.has(n)) continue
    args[n] = placeholder(n, props[n] ?? {}, purpose)
  }
}

function placeholder(name: string, s: Schema, purpose: string): unknown {
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  switch (typeOf(s)) {
    case 'string':
      if (/desc|purpose|reason|explanation/i.test(name)) return purpose
      if (/dir|cwd|path/i.test(name)) return '.'
      return ''
    case 'number':
    case 'integer':
      if (/timeout/i.test(name)) return 120_000
      if (/wait/i.test(name)) return 30
      return 0
    case 'boolean':
      return false
    case 'array':
      return []
    case 'object':
      return {}
    default:
      return ''
  }
}

function pathProp(schema: Schema | null): string | null {
  const props = propsOf(schema)
  return PATH_PROPS.find((n) => n in props) ?? null
}

function propsOf(schema: Schema | null): Record<string, Schema> {
  const p = schema?.properties
  return p && typeof p === 'object' ? (p as Record<string, Schema>) : {}
}

function requiredOf(schema: Schema | null): Set<string> {
  const r = schema?.required
  return new Set(Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string') : [])
}

/** Lower-case type of a JSON or Gemini (`STRING`, `ARRAY`) schema, looking through nullable unions. */
export function typeOf(s: Schema | undefined): string | undefined {
  if (!s) return undefined
  let t = s.type
  if (Array.isArray(t)) t = t.find((x) => x !== 'null')
  if (typeof t === 'string') return t.toLowerCase()
  const union = (s.anyOf ?? s.oneOf) as Schema[] | undefined
  if (Array.isArray(union)) return typeOf(union.find((x) => x.type !== 'null'))
  if (s.properties) return 'object'
  return undefined
}

/**
 * A value matching a (JSON or Gemini) schema, for structured-output auxiliary calls: objects get every
 * property, enums their first value, strings a title-like text for title keys and `text` elsewhere.
 */
export function valueFromSchema(s: Schema | undefined, title: string, key = '', depth = 0): unknown {
  if (!s || depth > 8) return title
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  if (s.const !== undefined) return s.const
  switch (typeOf(s)) {
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(propsOf(s))) out[k] = valueFromSchema(v, title, k, depth + 1)
      return out
    }
    case 'array':
      return []
    case 'boolean':
      return false
    case 'number':
    case 'integer':
      return 0
    default:
      return /title|name|summary/i.test(key) || key === '' ? title : 'text'
  }
}
