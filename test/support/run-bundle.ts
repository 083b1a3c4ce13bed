import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parse } from 'yaml'

export interface BundleRun {
  status: number | null
  stdout: string
  stderr: string
  outputs: Record<string, string>
  summary: string
}

/**
 * Run dist/index.js the way the GitHub runner does: inputs as INPUT_<NAME> (upper-cased, hyphens
 * kept) with action.yml defaults applied, fresh GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, cwd = the
 * workspace; outputs parsed from the runner's `name<<delimiter` file format.
 */
export function runBundle(
  inputs: Record<string, string>,
  opts: { cwd?: string; env?: Record<string, string> } = {},
): BundleRun {
  const root = path.resolve(import.meta.dirname, '..', '..')
  const action = parse(readFileSync(path.join(root, 'action.yml'), 'utf8')) as {
    inputs: Record<string, { default?: string }>
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-runner-'))
  const files = {
    GITHUB_OUTPUT: path.join(dir, 'output'),
    GITHUB_STEP_SUMMARY: path.join(dir, 'summary'),
    GITHUB_ENV: path.join(dir, 'env'),
    GITHUB_PATH: path.join(dir, 'path'),
    GITHUB_STATE: path.join(dir, 'state'),
  }
  for (const f of Object.values(files)) writeFileSync(f, '')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: opts.cwd ?? root,
    GITHUB_REPOSITORY: 'octo/harness-watch-test',
    RUNNER_TEMP: dir,
    ...files,
    ...opts.env,
  }
  for (const [name, spec] of Object.entries(action.inputs)) {
    env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = inputs[name] ?? spec.default ?? ''
  }
  const r = spawnSync(process.execPath, [path.join(root, 'dist', 'index.js')], {
    cwd: opts.cwd ?? root,
    env,
    encoding: 'utf8',
    timeout: 600_000,
  })
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    outputs: parseFileCommands(readFileSync(files.GITHUB_OUTPUT, 'utf8')),
    summary: readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8'),
  }
}

/** Parse `name<<DELIM\nvalue\nDELIM` (and `name=value`) lines as the runner does. */
export function parseFileCommands(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ''
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line)
    if (heredoc) {
      const [, name, delim] = heredoc
      const value: string[] = []
      for (i++; i < lines.length && lines[i] !== delim; i++) value.push(lines[i] ?? '')
      out[name as string] = value.join('\n')
    } else if (line.includes('=')) {
      const k = line.slice(0, line.indexOf('='))
      out[k] = line.slice(line.indexOf('=') + 1)
    }
  }
  return out
}
