// Regenerates the generated parts of README.md from their sources of truth:
//  - the manifest reference, from the manifest's JSON Schema (itself generated from the zod schema);
//  - the CLI reference, from the commander program's own help;
//  - the action's inputs and outputs, from action.yml.
// Each part sits between `<!-- <name>:start -->` and `<!-- <name>:end -->` markers.
// `--check` exits 1 when README.md is stale (CI).
import { readFileSync, writeFileSync } from 'node:fs'
import type { Command } from 'commander'
import { parse } from 'yaml'
import { buildProgram } from '../src/cli/index.js'
import { manifestJsonSchema } from '../src/manifest/jsonschema.js'

type Schema = {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  default?: unknown
  description?: string
  additionalProperties?: Schema | boolean
  minimum?: number
  maximum?: number
  pattern?: string
}

function typeOf(s: Schema): string {
  if (s.const !== undefined) return JSON.stringify(s.const)
  if (s.enum) return s.enum.map((e) => JSON.stringify(e)).join(' \\| ')
  const alts = s.anyOf ?? s.oneOf
  if (alts) return alts.map(typeOf).join(' \\| ')
  if (s.type === 'array') {
    const t = s.items ? typeOf(s.items) : 'any'
    return t.includes('|') ? `(${t})[]` : `${t}[]`
  }
  if (s.type === 'object' && !s.properties && typeof s.additionalProperties === 'object') {
    return `map of ${typeOf(s.additionalProperties)}`
  }
  if (Array.isArray(s.type)) return s.type.join(' \\| ')
  return s.type ?? 'any'
}

function rows(s: Schema, prefix: string, required: boolean, out: string[]): void {
  const alts = s.anyOf ?? s.oneOf
  if (s.properties) {
    if (prefix) out.push(row(prefix, 'object', required, s))
    for (const [k, v] of Object.entries(s.properties)) {
      rows(v, prefix ? `${prefix}.${k}` : k, s.required?.includes(k) ?? false, out)
    }
    return
  }
  if (s.type === 'array' && s.items?.properties) {
    out.push(row(prefix, 'list', required, s))
    rows(s.items, `${prefix}[]`, true, out)
    return
  }
  if (alts?.every((a) => a.properties)) {
    out.push(row(prefix, 'one of', required, s))
    for (const a of alts) rows(a, prefix, false, out)
    return
  }
  out.push(row(prefix, typeOf(s), required, s))
}

function row(field: string, type: string, required: boolean, s: Schema): string {
  const def = s.default === undefined ? '' : `\`${JSON.stringify(s.default)}\``
  const big = (n: number | undefined) => (n !== undefined && Math.abs(n) < 1e15 ? n : undefined)
  const lo = big(s.minimum)
  const hi = big(s.maximum)
  const range = lo !== undefined || hi !== undefined ? ` (${lo ?? '…'}–${hi ?? '…'})` : ''
  const desc = (s.description ?? '').replace(/\|/g, '\\|')
  return `| \`${field}\` | ${type.replace(/\n/g, ' ')}${range} | ${required && s.default === undefined ? 'yes' : ''} | ${def} | ${desc} |`
}

function manifestReference(): string {
  const out: string[] = []
  rows(manifestJsonSchema() as Schema, '', true, out)
  return ['| field | type | required | default | meaning |', '|---|---|---|---|---|', ...out].join('\n')
}

function helpOf(cmd: Command, path: string[], out: string[]): void {
  const name = ['harness-watch', ...path].join(' ')
  // The help as `--help` prints it, text added after the options (exit codes, resuming) included.
  let help = ''
  cmd.configureOutput({ writeOut: (s) => (help += s), writeErr: (s) => (help += s) })
  cmd.outputHelp()
  out.push(`#### \`${name}\``, '', '```', help.trimEnd(), '```', '')
  for (const sub of cmd.commands) helpOf(sub, [...path, sub.name()], out)
}

function cliReference(): string {
  const out: string[] = []
  const program = buildProgram()
  for (const c of program.commands) helpOf(c, [c.name()], out)
  return out.join('\n').trimEnd()
}

function replaceBlock(text: string, name: string, body: string): string {
  const start = `<!-- ${name}:start -->`
  const end = `<!-- ${name}:end -->`
  const i = text.indexOf(start)
  const j = text.indexOf(end)
  if (i < 0 || j < i) throw new Error(`README.md has no ${start} … ${end} block`)
  return `${text.slice(0, i + start.length)}\n${body}\n${text.slice(j)}`
}

/** A table cell: one line, `|` escaped, `<` as an entity (`<experiment>` is not an HTML tag). */
function cell(text: string): string {
  return text
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .trim()
}

/** The inputs and outputs tables of action.yml (description, default, and the commands that use it). */
export function actionReference(actionYml: string): string {
  const meta = parse(actionYml) as {
    inputs?: Record<string, { description?: string; required?: boolean; default?: unknown }>
    outputs?: Record<string, { description?: string }>
  }
  const out = ['| input | required | default | meaning |', '|---|---|---|---|']
  for (const [name, i] of Object.entries(meta.inputs ?? {})) {
    const def = i.default === undefined || i.default === '' ? '' : `\`${cell(String(i.default))}\``
    out.push(`| \`${name}\` | ${i.required ? 'yes' : ''} | ${def} | ${cell(i.description ?? '')} |`)
  }
  out.push('', '| output | meaning |', '|---|---|')
  for (const [name, o] of Object.entries(meta.outputs ?? {})) {
    out.push(`| \`${name}\` | ${cell(o.description ?? '')} |`)
  }
  return out.join('\n')
}

const file = new URL('../README.md', import.meta.url)
const old = readFileSync(file, 'utf8')
let next = replaceBlock(old, 'manifest-reference', manifestReference())
next = replaceBlock(next, 'cli-reference', cliReference())
next = replaceBlock(
  next,
  'action-reference',
  actionReference(readFileSync(new URL('../action.yml', import.meta.url), 'utf8')),
)
if (process.argv.includes('--check')) {
  if (next !== old) {
    console.error('README.md generated sections are stale: run `npm run build` and commit')
    process.exit(1)
  }
} else if (next !== old) {
  writeFileSync(file, next)
}
