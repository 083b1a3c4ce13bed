#!/usr/bin/env node
// Run a JavaScript action's bundled entry the way actions/runner does, without GitHub.
//
//   node scripts/run-action.mjs [--action DIR] [--workspace DIR] [--env FILE] [--event FILE] [--json] [name=value ...]
//
// What it reproduces (actions/runner's NodeScriptActionHandler and file commands):
//  * reads action.yml, refuses a runs.using other than node20/node24, applies input defaults
//    (`${{ github.token }}` in a default becomes GITHUB_TOKEN);
//  * exports each input as INPUT_<NAME>: upper-cased, spaces to "_", hyphens KEPT (INPUT_PR-NUMBER);
//  * creates fresh GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STATE and GITHUB_STEP_SUMMARY files
//    in a new RUNNER_TEMP, and the usual GITHUB_* / RUNNER_* variables (overridable with --env);
//  * runs `node <action>/<runs.pre|main|post>` with cwd = GITHUB_WORKSPACE, passing state between them;
//  * parses outputs (`k=v` and `k<<DELIMITER` heredocs), env, path and state, reads the summary;
//  * collects ::error/::warning/::notice annotations; warns about undeclared inputs and outputs;
//  * exits with the action's exit code, the step's conclusion;
//  * cancellation: a SIGINT or SIGTERM to this script cancels the step as the runner cancels a job's
//    step: SIGINT to the action's process, SIGTERM 7.5 s later, SIGKILL 2.5 s after that.
// Not reproduced: masking, expression evaluation beyond ${{ github.token }}, the runner's own node
// binary (the node running this script is used; a note is printed when the major differs).
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'

function parseArgs(argv) {
  const opt = { action: '.', workspace: undefined, env: undefined, event: undefined, json: false, inputs: {} }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--action') opt.action = argv[++i]
    else if (a === '--workspace') opt.workspace = argv[++i]
    else if (a === '--env') opt.env = argv[++i]
    else if (a === '--event') opt.event = argv[++i]
    else if (a === '--json') opt.json = true
    else if (a.includes('=')) opt.inputs[a.slice(0, a.indexOf('='))] = a.slice(a.indexOf('=') + 1)
    else throw new Error(`unknown argument ${a}`)
  }
  return opt
}

/** dotenv-style KEY=VALUE lines (# comments, optional quotes), the format @github/local-action reads. */
function readEnvFile(file) {
  const out = {}
  for (const line of readFileSync(file, 'utf8').split(/\r?\n/)) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)\s*$/.exec(line)
    if (!m || line.trimStart().startsWith('#')) continue
    let v = m[2]
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1)
    out[m[1]] = v
  }
  return out
}

/** The runner's file-command format: `name=value` lines and `name<<DELIMITER` … `DELIMITER` blocks. */
export function parseFileCommands(text) {
  const out = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (!line) continue
    const h = /^([^=<]+)<<(.+)$/.exec(line)
    if (h) {
      const body = []
      for (i++; i < lines.length && lines[i] !== h[2]; i++) body.push(lines[i])
      if (i >= lines.length) throw new Error(`unterminated heredoc for ${h[1]}`)
      out[h[1]] = body.join('\n')
    } else {
      const eq = line.indexOf('=')
      if (eq < 1) throw new Error(`invalid file-command line: ${line}`)
      out[line.slice(0, eq)] = line.slice(eq + 1)
    }
  }
  return out
}

const inputEnvName = (name) => `INPUT_${name.replace(/ /g, '_').toUpperCase()}`

async function main() {
  const opt = parseArgs(process.argv.slice(2))
  const actionDir = resolve(opt.action)
  const metaPath = ['action.yml', 'action.yaml'].map((f) => join(actionDir, f)).find((f) => existsSync(f))
  if (!metaPath) throw new Error(`no action.yml in ${actionDir}`)
  const meta = parseYaml(readFileSync(metaPath, 'utf8'))
  const using = meta?.runs?.using
  if (!['node20', 'node24'].includes(using))
    throw new Error(`runs.using must be node20 or node24, got ${using}`)
  if (Number(using.slice(4)) !== Number(process.versions.node.split('.')[0])) {
    console.error(`[run-action] note: the action declares ${using}; running under node ${process.version}`)
  }
  const extraEnv = opt.env ? readEnvFile(opt.env) : {}
  const temp = mkdtempSync(join(tmpdir(), 'run-action-'))
  const workspace = resolve(opt.workspace ?? extraEnv.GITHUB_WORKSPACE ?? join(temp, 'workspace'))
  mkdirSync(workspace, { recursive: true })
  const files = {}
  for (const [k, name] of [
    ['GITHUB_OUTPUT', 'set_output'],
    ['GITHUB_ENV', 'set_env'],
    ['GITHUB_PATH', 'add_path'],
    ['GITHUB_STATE', 'save_state'],
    ['GITHUB_STEP_SUMMARY', 'step_summary'],
  ]) {
    files[k] = join(temp, `${name}_${randomUUID()}`)
    writeFileSync(files[k], '')
  }
  const eventPath = opt.event ? resolve(opt.event) : join(temp, 'event.json')
  if (!opt.event) writeFileSync(eventPath, JSON.stringify({ inputs: {} }))

  const token = extraEnv.GITHUB_TOKEN ?? ''
  const declared = meta.inputs ?? {}
  const inputEnv = {}
  for (const [name, spec] of Object.entries(declared)) {
    let v = opt.inputs[name] ?? extraEnv[inputEnvName(name)]
    if (v === undefined && spec?.default !== undefined) v = String(spec.default)
    if (typeof v === 'string') v = v.replace(/\$\{\{\s*github\.token\s*\}\}/g, token)
    // The runner sets nothing for an input with no value and no default.
    if (v !== undefined) inputEnv[inputEnvName(name)] = v
  }
  for (const k of Object.keys(opt.inputs)) {
    if (!(k in declared)) console.error(`[run-action] warning: unexpected input '${k}' (not in action.yml)`)
  }
  const repo = extraEnv.GITHUB_REPOSITORY ?? 'acme/widgets'
  const baseEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // Where the machine's container engine is (a runner's own environment reaches its actions).
    ...Object.fromEntries(
      ['DOCKER_HOST', 'DOCKER_CONTEXT', 'CONTAINER_HOST'].flatMap((k) =>
        process.env[k] === undefined ? [] : [[k, process.env[k]]],
      ),
    ),
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_ACTION: 'run-action',
    GITHUB_ACTION_PATH: actionDir,
    GITHUB_ACTOR: 'local',
    GITHUB_API_URL: 'https://api.github.com',
    GITHUB_GRAPHQL_URL: 'https://api.github.com/graphql',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_EVENT_NAME: 'workflow_dispatch',
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_JOB: 'local',
    GITHUB_REF: 'refs/heads/main',
    GITHUB_REPOSITORY: repo,
    GITHUB_REPOSITORY_OWNER: repo.split('/')[0],
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_RUN_ID: '1',
    GITHUB_RUN_NUMBER: '1',
    GITHUB_SHA: '0000000000000000000000000000000000000000',
    GITHUB_WORKFLOW: 'local',
    RUNNER_ARCH: 'X64',
    RUNNER_NAME: 'local',
    RUNNER_OS: 'Linux',
    RUNNER_TEMP: temp,
    RUNNER_TOOL_CACHE: join(temp, 'toolcache'),
    ...extraEnv,
    GITHUB_WORKSPACE: workspace,
    ...files,
    ...inputEnv,
  }

  const result = { steps: [], outputs: {}, env: {}, path: [], state: {}, summary: '', annotations: [] }
  let state = {}
  let exitCode = 0
  for (const phase of ['pre', 'main', 'post']) {
    const entry = meta.runs[phase]
    if (!entry) continue
    const stateEnv = Object.fromEntries(Object.entries(state).map(([k, v]) => [`STATE_${k}`, v]))
    const r = await runStep(process.execPath, [join(actionDir, entry)], {
      cwd: workspace,
      env: { ...baseEnv, ...stateEnv },
    })
    for (const line of (r.stdout ?? '').split('\n')) {
      const m = /^::(error|warning|notice|add-mask)(?: ([^:]*))?::(.*)$/.exec(line)
      if (m) result.annotations.push({ phase, kind: m[1], props: m[2] ?? '', message: m[3] })
    }
    const code = r.status ?? 1
    result.steps.push({ phase, entry, exitCode: code, signal: r.signal })
    if (phase === 'main') exitCode = code
    state = { ...state, ...parseFileCommands(readFileSync(files.GITHUB_STATE, 'utf8')) }
    writeFileSync(files.GITHUB_STATE, '')
  }
  result.outputs = parseFileCommands(readFileSync(files.GITHUB_OUTPUT, 'utf8'))
  result.env = parseFileCommands(readFileSync(files.GITHUB_ENV, 'utf8'))
  result.path = readFileSync(files.GITHUB_PATH, 'utf8').split('\n').filter(Boolean)
  result.state = state
  result.summary = readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8')
  for (const o of Object.keys(result.outputs)) {
    if (!(o in (meta.outputs ?? {})))
      console.error(`[run-action] warning: output '${o}' is not declared in action.yml`)
  }
  if (opt.json) console.log(JSON.stringify({ exitCode, ...result }))
  else {
    console.error(`[run-action] conclusion: ${exitCode === 0 ? 'success' : 'failure'} (exit ${exitCode})`)
    console.error(`[run-action] outputs: ${JSON.stringify(result.outputs)}`)
    if (result.summary) console.error(`[run-action] step summary:\n${result.summary}`)
  }
  process.exitCode = exitCode
}

/** Signals the runner sends a step's process when its job is cancelled, with the delay before each. */
const CANCEL_SEQUENCE = [
  ['SIGINT', 0],
  ['SIGTERM', 7500],
  ['SIGKILL', 2500],
]

/**
 * One phase's process, output passed through as it comes and collected. A SIGINT/SIGTERM to this
 * script starts the runner's cancellation sequence on the phase's process (see CANCEL_SEQUENCE).
 */
function runStep(cmd, args, opts) {
  return new Promise((done) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d
      process.stdout.write(d)
    })
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d
      process.stderr.write(d)
    })
    let timer = null
    let cancelled = false
    const cancel = () => {
      if (cancelled) return
      cancelled = true
      let i = 0
      const next = () => {
        const [sig] = CANCEL_SEQUENCE[i]
        child.kill(sig)
        i++
        if (i < CANCEL_SEQUENCE.length) timer = setTimeout(next, CANCEL_SEQUENCE[i][1])
      }
      next()
    }
    process.on('SIGINT', cancel)
    process.on('SIGTERM', cancel)
    child.on('close', (status, signal) => {
      clearTimeout(timer)
      process.off('SIGINT', cancel)
      process.off('SIGTERM', cancel)
      done({ status, signal, stdout, stderr })
    })
  })
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) await main()
