// An offline runner for this repository's workflows, built on GitHub's own workflow parser
// (@actions/workflow-parser) and expression engine (@actions/expressions). It stands in for
// nektos/act where neither act nor Docker is available.
//
//   npx tsx scripts/simulate-workflow.ts WORKFLOW.yml [--workspace DIR] [--action-root DIR]
//        [--env-file FILE] [--artifacts DIR] [--run-id N] [--event-name NAME] [--event FILE]
//        [--input k=v ...] [--assume-success JOB ...] [--check-permissions] [--json]
//
// --check-permissions also compares the secrets each call passes with what its manifest reads (when
// the manifest named by `with: manifest:` is in --workspace).
//
// Before any job, the load-time check GitHub makes on every reusable-workflow call: each job of the
// called workflow asks for no more permissions than the calling job grants, whatever its `if:`
// (scripts/workflow-permissions.ts). A failing call ends the run as GitHub does (startup failure);
// --check-permissions runs only that check.
//
// Runs: jobs in `needs` order; job and step `if:` with success()/failure()/always()/cancelled();
// step continue-on-error;
// strategy.matrix (literal or fromJSON(...)) with include/exclude and fail-fast; reusable workflows,
// local (`./.github/workflows/x.yml`) or remote (`owner/harness-watch/.github/workflows/x.yml@ref`,
// read from --action-root) with typed inputs, secrets and outputs; `uses: ./…` JavaScript actions
// through scripts/run-action.mjs exactly as the runner runs node actions; `run:` steps under
// `bash -e -o pipefail` with GITHUB_OUTPUT/GITHUB_ENV/GITHUB_STEP_SUMMARY; env at workflow, job
// and step level. Offline stand-ins for remote actions:
//   actions/checkout           no-op for the workspace; with `path:` links the action root there
//                              (a checkout of this repository);
//   actions/setup-node         no-op;
//   actions/cache/restore|save a miss / nothing saved (no cache service offline);
//   actions/upload-artifact    copies into --artifacts/<run-id>/<name>; a duplicate name fails
//                              (409 Conflict, F10); if-no-files-found: error|warn|ignore; outputs
//                              artifact-id and artifact-url;
//   actions/download-artifact  by name or pattern, one folder per artifact unless merge-multiple,
//                              from another run with run-id.
// Not supported: services, containers, concurrency, parallel legs (they run one after another in
// matrix order; job outputs are the last leg's), other remote actions (the step fails).
import { randomUUID } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { data, Evaluator, Lexer, Parser } from '@actions/expressions'
import {
  convertWorkflowTemplate,
  isBasicExpression,
  isBoolean,
  isMapping,
  isNumber,
  isSequence,
  isString,
  NoOperationTraceWriter,
  parseWorkflow,
} from '@actions/workflow-parser'
import type { Step, WorkflowJob } from '@actions/workflow-parser/model/workflow-template'
import type { MappingToken } from '@actions/workflow-parser/templates/tokens/mapping-token'
import type { TemplateToken } from '@actions/workflow-parser/templates/tokens/template-token'
import { execa } from 'execa'
import { parse as parseYaml } from 'yaml'
import { envReadByManifest, type ManifestEnvNames, secretMismatches } from '../src/action/misconfig.js'
import { inheritedPermissionErrors, nestedPermissionErrors } from './workflow-permissions.js'

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
type Result = 'success' | 'failure' | 'skipped' | 'cancelled'
interface JobRun {
  result: Result
  outputs: Record<string, string>
}
export interface TraceEntry {
  job: string
  step: string
  result: Result
  outputs?: Record<string, string>
  /** A local action's inputs (`uses: ./…`), as evaluated for the step. */
  with?: Record<string, string>
}

const args = process.argv.slice(2)
const opt = {
  workflow: '',
  workspace: process.cwd(),
  actionRoot: process.cwd(),
  envFile: undefined as string | undefined,
  artifacts: undefined as string | undefined,
  runId: '1',
  eventName: 'workflow_dispatch',
  event: undefined as string | undefined,
  inputs: {} as Record<string, string>,
  json: false,
  assume: new Set<string>(),
  checkOnly: false,
}
for (let i = 0; i < args.length; i++) {
  const a = args[i] as string
  const next = () => args[++i] as string
  if (a === '--workspace') opt.workspace = resolve(next())
  else if (a === '--action-root') opt.actionRoot = resolve(next())
  else if (a === '--env-file') opt.envFile = next()
  else if (a === '--artifacts') opt.artifacts = resolve(next())
  else if (a === '--run-id') opt.runId = next()
  else if (a === '--event-name') opt.eventName = next()
  else if (a === '--event') opt.event = resolve(next())
  else if (a === '--input') {
    const kv = next()
    opt.inputs[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1)
  } else if (a === '--json') opt.json = true
  else if (a === '--assume-success') opt.assume.add(next())
  else if (a === '--check-permissions') opt.checkOnly = true
  else opt.workflow = a
}
const log = (s: string) => process.stderr.write(`${s}\n`)
const artifactStore = opt.artifacts ?? mkdtempSync(join(tmpdir(), 'sim-artifacts-'))

const fileEnv: Record<string, string> = {}
if (opt.envFile) {
  for (const line of readFileSync(opt.envFile, 'utf8').split(/\r?\n/)) {
    // SECRET_<name> may carry a reusable workflow's secret name as written (provider-api-key).
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*|SECRET_[A-Za-z0-9_-]+)\s*=\s*(.*)$/.exec(line)
    if (m && !line.trimStart().startsWith('#')) fileEnv[m[1] as string] = m[2] as string
  }
}
/** Secrets: SECRET_<NAME>=… lines of the env file, plus GITHUB_TOKEN. */
const secrets: Record<string, Json> = { GITHUB_TOKEN: fileEnv.GITHUB_TOKEN ?? '' }
for (const [k, v] of Object.entries(fileEnv)) if (k.startsWith('SECRET_')) secrets[k.slice(7)] = v

// ---------------------------------------------------------------- expressions
function evaluate(expr: string, ctx: Record<string, Json>, status: { failed: boolean }): Json {
  const lexed = new Lexer(expr).lex()
  const fns = [
    { name: 'success', minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(!status.failed) },
    { name: 'failure', minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(status.failed) },
    { name: 'always', minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(true) },
    { name: 'cancelled', minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(false) },
    { name: 'hashFiles', minArgs: 1, maxArgs: 255, call: () => new data.StringData('') },
  ]
  const ast = new Parser(lexed.tokens, Object.keys(ctx), fns).parse()
  const dict = JSON.parse(JSON.stringify(ctx), data.reviver) as data.Dictionary
  const out = new Evaluator(ast, dict, new Map(fns.map((f) => [f.name.toLowerCase(), f]))).evaluate()
  return JSON.parse(JSON.stringify(out, data.replacer)) as Json
}

/** Evaluate a template token (literal, ${{ }} expression, mapping or sequence) to plain JSON. */
function evalToken(
  t: TemplateToken | undefined,
  ctx: Record<string, Json>,
  status = { failed: false },
): Json {
  if (!t) return null
  if (isBasicExpression(t)) return evaluate(t.expression, ctx, status)
  if (isString(t) || isNumber(t) || isBoolean(t)) return t.value
  if (isMapping(t)) {
    const o: Record<string, Json> = {}
    for (const { key, value } of t) {
      const k = isBasicExpression(key)
        ? evaluate(key.expression, ctx, status)
        : (key as unknown as { value: unknown }).value
      o[String(k)] = evalToken(value, ctx, status)
    }
    return o
  }
  if (isSequence(t)) return [...t].map((x) => evalToken(x, ctx, status))
  return null
}
const str = (v: Json | undefined): string =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)

// ---------------------------------------------------------------- matrix
function expandMatrix(m: Json): Record<string, Json>[] {
  if (m === null) return [{}]
  if (typeof m !== 'object' || Array.isArray(m))
    throw new Error(`matrix must be a mapping, got ${JSON.stringify(m)}`)
  const { include = [], exclude = [], ...dims } = m as Record<string, Json>
  let combos: Record<string, Json>[] = [{}]
  for (const [k, vals] of Object.entries(dims)) {
    if (!Array.isArray(vals)) throw new Error(`matrix dimension ${k} must be an array`)
    if (vals.length === 0) throw new Error(`Matrix vector '${k}' does not contain any values`)
    combos = combos.flatMap((c) => vals.map((v) => ({ ...c, [k]: v })))
  }
  if (Object.keys(dims).length === 0) combos = []
  const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a) === JSON.stringify(b)
  const matches = (c: Record<string, Json>, p: Record<string, Json>) =>
    Object.entries(p).every(([k, v]) => same(c[k], v))
  combos = combos.filter((c) => !(exclude as Record<string, Json>[]).some((e) => matches(c, e)))
  const original = combos.map((c) => ({ ...c }))
  for (const inc of include as Record<string, Json>[]) {
    // GitHub: an include entry extends every original combination whose original values it keeps;
    // otherwise it is added as a new combination.
    let merged = false
    original.forEach((o, i) => {
      if (Object.entries(inc).every(([k, v]) => !(k in o) || same(o[k], v))) {
        Object.assign(combos[i] as Record<string, Json>, inc)
        merged = true
      }
    })
    if (!merged) combos.push({ ...inc })
  }
  if (combos.length > 256) throw new Error(`matrix has ${combos.length} legs; GitHub allows 256`)
  if (combos.length === 0) throw new Error('Matrix vector does not contain any values')
  return combos
}

// ---------------------------------------------------------------- file commands
function parseKv(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    if (!line) continue
    const h = /^([^=<]+)<<(.+)$/.exec(line)
    if (h) {
      const body: string[] = []
      for (i++; i < lines.length && lines[i] !== h[2]; i++) body.push(lines[i] as string)
      out[h[1] as string] = body.join('\n')
    } else {
      const eq = line.indexOf('=')
      if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1)
    }
  }
  return out
}

// ---------------------------------------------------------------- workflow files
/** Absolute path of a workflow reference: local to the workspace, or remote harness-watch → action root. */
function workflowFile(ref: string): string {
  if (ref.startsWith('./')) {
    const inWorkspace = join(opt.workspace, ref)
    return existsSync(inWorkspace) ? inWorkspace : join(opt.actionRoot, ref)
  }
  const m = /^[^/]+\/harness-watch\/(.+)@.+$/.exec(ref)
  if (m) return join(opt.actionRoot, m[1] as string)
  if (isAbsolute(ref)) return ref
  throw new Error(`remote reusable workflow not available offline: ${ref}`)
}

/** Raw step tokens of a job (the converter drops `with:`). */
function rawSteps(file: string, jobId: string): MappingToken[] {
  const parsed = parseWorkflow(
    { name: file, content: readFileSync(file, 'utf8') },
    new NoOperationTraceWriter(),
  )
  const jobs = (parsed.value as MappingToken).find('jobs') as MappingToken
  const job = jobs.find(jobId) as MappingToken | undefined
  const steps = job?.find('steps')
  return steps && isSequence(steps) ? ([...steps] as MappingToken[]) : []
}

/** Workflow-level `env:` of a file (evaluated once per job with the job's context). */
function workflowEnv(file: string): TemplateToken | undefined {
  const parsed = parseWorkflow(
    { name: file, content: readFileSync(file, 'utf8') },
    new NoOperationTraceWriter(),
  )
  return (parsed.value as MappingToken).find('env') ?? undefined
}

/** The raw top-level mapping of a workflow file. */
function rawWorkflow(file: string): MappingToken {
  return parseWorkflow({ name: file, content: readFileSync(file, 'utf8') }, new NoOperationTraceWriter())
    .value as MappingToken
}

/**
 * GitHub's load-time check (scripts/workflow-permissions.ts): every job of a called workflow asks
 * for no more than the calling job grants, whatever its `if:` says. Errors in GitHub's words.
 */
function loadTimePermissionErrors(file: string): {
  errors: string[]
  publishErrors: string[]
  secretErrors: string[]
} {
  const wf = rawWorkflow(file)
  const literal = (t: TemplateToken | null | undefined) => (t ? evalToken(t, {}) : undefined)
  const jobs = wf.find('jobs') as MappingToken | null
  const errors: string[] = []
  const publishErrors: string[] = []
  const secretErrors: string[] = []
  for (const { key, value } of jobs ?? []) {
    const job = value as MappingToken
    const uses = job.find('uses')
    if (!uses || !isString(uses)) continue
    const calleeFile = workflowFile(uses.value)
    const callee = rawWorkflow(calleeFile)
    const calleeJobs = (callee.find('jobs') as MappingToken | null) ?? []
    errors.push(
      ...nestedPermissionErrors(
        String((key as unknown as { value: unknown }).value),
        literal(job.find('permissions')),
        literal(wf.find('permissions')),
        {
          ref: uses.value,
          permissions: literal(callee.find('permissions')),
          jobs: [...calleeJobs].map((j) => ({
            id: String((j.key as unknown as { value: unknown }).value),
            permissions: literal((j.value as MappingToken).find('permissions')),
          })),
        },
      ),
    )
    secretErrors.push(...secretLines(file, String((key as unknown as { value: unknown }).value), job))
    if (callee.find('permissions')) continue
    // Jobs that name no permissions get this call's grant: does it hold what they need when they run?
    const callerId = String((key as unknown as { value: unknown }).value)
    const ctx = callContext(job, callee)
    const inheriting = [...calleeJobs].flatMap((j) => {
      const body = j.value as MappingToken
      const needs = (body.find('env') as MappingToken | null)?.find('HW_PUBLISH_PERMISSION')
      if (body.find('permissions') || !needs || !isString(needs)) return []
      const cond = body.find('if')
      const runs =
        !cond ||
        Boolean(
          evaluate(
            isBasicExpression(cond) ? cond.expression : String((cond as unknown as { value: unknown }).value),
            ctx,
            { failed: false },
          ),
        )
      return [{ id: String((j.key as unknown as { value: unknown }).value), needs: needs.value, runs }]
    })
    publishErrors.push(
      ...inheritedPermissionErrors(
        callerId,
        relativeName(file),
        literal(job.find('permissions')),
        literal(wf.find('permissions')),
        uses.value,
        inheriting,
      ),
    )
  }
  return { errors, publishErrors, secretErrors }
}

/**
 * Secrets a call passes against what its manifest reads (`with: manifest:` found in the workspace):
 * one line per secret read but not passed, or passed but never read (src/action/misconfig.ts).
 */
function secretLines(file: string, callerId: string, job: MappingToken): string[] {
  const manifest = (job.find('with') as MappingToken | null)?.find('manifest')
  if (!manifest || !isString(manifest)) return []
  const manifestFile = join(opt.workspace, manifest.value)
  if (!existsSync(manifestFile)) return []
  const secretsToken = job.find('secrets')
  if (secretsToken && isString(secretsToken)) return [] // secrets: inherit passes whatever exists
  const passed = [...((secretsToken as MappingToken | null) ?? [])].map((s) =>
    String((s.key as unknown as { value: unknown }).value),
  )
  const reads = envReadByManifest(parseYaml(readFileSync(manifestFile, 'utf8')) as ManifestEnvNames)
  // litellm-config: the leg's LiteLLM reads the provider key and supplies LITELLM_BASE_URL itself.
  const litellm = (job.find('with') as MappingToken | null)?.find('litellm-config')
  if (litellm && !(isString(litellm) && litellm.value === '')) {
    reads.add('PROVIDER_API_KEY')
    reads.delete('LITELLM_BASE_URL')
    if (passed.includes('provider-base-url')) reads.add('PROVIDER_BASE_URL')
  }
  return secretMismatches(reads, passed, `job '${callerId}' in ${relativeName(file)}`).map(
    (l) => `${l} (${manifest.value})`,
  )
}

/** The file as the user named it (relative to the workspace when inside it). */
function relativeName(file: string): string {
  return file.startsWith(`${opt.workspace}/`) ? file.slice(opt.workspace.length + 1) : file
}

/**
 * The context a called job's `if:` sees at load time, as far as the call decides it: the caller's
 * `with:` over the callee's input defaults (expressions of the caller's event left as a non-empty
 * placeholder), and every needs.<job>.outputs.<name> of the callee as a non-empty value.
 */
function callContext(callerJob: MappingToken, callee: MappingToken): Record<string, Json> {
  const on = callee.find('on') as MappingToken | null
  const call = on?.find('workflow_call') as MappingToken | null
  const defs = (call?.find('inputs') as MappingToken | null) ?? []
  const withs = callerJob.find('with') as MappingToken | null
  const inputs: Record<string, Json> = {}
  for (const { key, value } of defs) {
    const name = String((key as unknown as { value: unknown }).value)
    const def = value as MappingToken
    const given = withs?.find(name)
    const type = str(evalToken(def.find('type') ?? undefined, {}))
    if (given && isBasicExpression(given))
      inputs[name] = type === 'boolean' ? true : type === 'number' ? 1 : 'x'
    else if (given) inputs[name] = evalToken(given, {})
    else inputs[name] = evalToken(def.find('default') ?? undefined, {}) ?? (type === 'boolean' ? false : '')
  }
  const needs: Record<string, Json> = {}
  for (const { key, value } of (callee.find('jobs') as MappingToken | null) ?? []) {
    const outs = ((value as MappingToken).find('outputs') as MappingToken | null) ?? []
    needs[String((key as unknown as { value: unknown }).value)] = {
      result: 'success',
      outputs: Object.fromEntries(
        [...outs].map((o) => [String((o.key as unknown as { value: unknown }).value), 'x']),
      ),
    }
  }
  return { inputs, needs, github: githubContext(opt.workspace), vars: {}, secrets: {} }
}

// ---------------------------------------------------------------- artifacts (upload/download stand-ins)
function globToRegex(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  )
}

let artifactCount = 0

function uploadArtifact(
  w: Record<string, Json>,
  cwd: string,
): { ok: boolean; message: string; outputs?: Record<string, string> } {
  const name = str(w.name) || 'artifact'
  if (/[":<>|*?\\/\r\n]/.test(name)) return { ok: false, message: `invalid artifact name "${name}"` }
  const paths = str(w.path)
    .split('\n')
    .map((p) => p.trim())
    .filter(Boolean)
  const dest = join(artifactStore, opt.runId, name)
  if (existsSync(dest) && str(w.overwrite) !== 'true') {
    return {
      ok: false,
      message: `Failed to CreateArtifact: Received non-retryable error: (409) Conflict: an artifact with this name already exists on the workflow run`,
    }
  }
  const found = paths.map((p) => resolve(cwd, p)).filter((p) => existsSync(p))
  if (found.length === 0) {
    const mode = str(w['if-no-files-found']) || 'warn'
    const message = `No files were found with the provided path: ${paths.join(', ')}. No artifacts will be uploaded.`
    return { ok: mode !== 'error', message }
  }
  mkdirSync(dest, { recursive: true })
  for (const p of found) {
    // A folder uploads its contents; a file uploads itself at the artifact root. Hidden files are excluded (v4.4+).
    const filter = (src: string) =>
      !src
        .slice(p.length)
        .split('/')
        .some((s) => s.startsWith('.'))
    if (statSync(p).isDirectory()) cpSync(p, dest, { recursive: true, filter })
    else cpSync(p, join(dest, p.split('/').at(-1) as string))
  }
  // upload-artifact's documented outputs: the artifact's id and its page on the run.
  artifactCount++
  const id = String(artifactCount)
  return {
    ok: true,
    message: `uploaded artifact ${name}`,
    outputs: {
      'artifact-id': id,
      'artifact-url': `https://github.com/${repository}/actions/runs/${opt.runId}/artifacts/${id}`,
    },
  }
}

function downloadArtifact(w: Record<string, Json>, cwd: string): { ok: boolean; message: string } {
  const runId = str(w['run-id']) || opt.runId
  const root = join(artifactStore, runId)
  const available = existsSync(root) ? readdirSync(root) : []
  const target = resolve(cwd, str(w.path) || '.')
  const name = str(w.name)
  if (name) {
    if (!available.includes(name))
      return { ok: false, message: `Unable to download artifact(s): Artifact not found for name: ${name}` }
    mkdirSync(target, { recursive: true })
    cpSync(join(root, name), target, { recursive: true })
    return { ok: true, message: `downloaded ${name}` }
  }
  const pattern = str(w.pattern) || '*'
  const picked = available.filter((a) => globToRegex(pattern).test(a))
  if (picked.length === 0) return { ok: true, message: `no artifacts match ${pattern}` }
  for (const a of picked) {
    const into = str(w['merge-multiple']) === 'true' ? target : join(target, a)
    mkdirSync(into, { recursive: true })
    cpSync(join(root, a), into, { recursive: true })
  }
  return { ok: true, message: `downloaded ${picked.join(', ')}` }
}

// ---------------------------------------------------------------- execution
const summaries: string[] = []
const trace: TraceEntry[] = []
const workspaces: string[] = []
const eventPayload = opt.event ? (JSON.parse(readFileSync(opt.event, 'utf8')) as Json) : {}
const repository = fileEnv.GITHUB_REPOSITORY ?? 'acme/widgets'
const githubContext = (workspace: string): Record<string, Json> => ({
  repository,
  repository_owner: repository.split('/')[0] as string,
  event_name: opt.eventName,
  event: eventPayload,
  ref: fileEnv.GITHUB_REF ?? 'refs/heads/main',
  // Set for pull_request events (GITHUB_BASE_REF / GITHUB_HEAD_REF in the env file), else empty.
  base_ref: fileEnv.GITHUB_BASE_REF ?? '',
  head_ref: fileEnv.GITHUB_HEAD_REF ?? '',
  sha: fileEnv.GITHUB_SHA ?? '0000000000000000000000000000000000000000',
  workspace,
  token: fileEnv.GITHUB_TOKEN ?? '',
  api_url: fileEnv.GITHUB_API_URL ?? 'https://api.github.com',
  server_url: 'https://github.com',
  run_id: opt.runId,
  run_number: opt.runId,
  run_attempt: '1',
  workflow: 'simulated',
  actor: 'local',
})

/** Where the machine's container engine is: a runner's environment may name one, and its steps inherit it. */
function engineEnv(): Record<string, string> {
  const keys = ['DOCKER_HOST', 'DOCKER_CONTEXT', 'CONTAINER_HOST']
  return Object.fromEntries(
    keys.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k] ?? '']),
  )
}

async function runStep(
  workspace: string,
  jobId: string,
  step: Step,
  raw: MappingToken | undefined,
  ctx: Record<string, Json>,
  stepsCtx: Record<string, Json>,
  envVars: Record<string, string>,
): Promise<{ result: Result; outputs: Record<string, string>; with?: Record<string, string> }> {
  const temp = mkdtempSync(join(tmpdir(), 'sim-step-'))
  const files = {
    GITHUB_OUTPUT: join(temp, `set_output_${randomUUID()}`),
    GITHUB_ENV: join(temp, 'env'),
    GITHUB_PATH: join(temp, 'path'),
    GITHUB_STEP_SUMMARY: join(temp, 'summary'),
  }
  for (const f of Object.values(files)) writeFileSync(f, '')
  const stepEnvJson = (evalToken('env' in step ? step.env : undefined, ctx) ?? {}) as Record<string, Json>
  const stepEnv = {
    ...envVars,
    ...Object.fromEntries(Object.entries(stepEnvJson).map(([k, v]) => [k, str(v)])),
  }
  const github = ctx.github as Record<string, Json>
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? temp,
    ...engineEnv(),
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    RUNNER_OS: 'Linux',
    RUNNER_TEMP: temp,
    GITHUB_REPOSITORY: str(github.repository),
    GITHUB_API_URL: fileEnv.GITHUB_API_URL ?? 'https://api.github.com',
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_RUN_ID: opt.runId,
    GITHUB_EVENT_NAME: opt.eventName,
    GITHUB_WORKSPACE: workspace,
    GITHUB_JOB: jobId,
    // A secret is never an environment variable of a step unless the workflow maps it into env:.
    ...Object.fromEntries(Object.entries(fileEnv).filter(([k]) => !k.startsWith('SECRET_'))),
    ...stepEnv,
    ...files,
  }
  const withs = (evalToken(raw?.find('with') ?? undefined, ctx) ?? {}) as Record<string, Json>
  const cwd = resolve(workspace, str(evalToken(raw?.find('working-directory') ?? undefined, ctx)) || '.')
  let exitCode = 0
  let outputs: Record<string, string> = {}
  if ('run' in step) {
    const script = str(evalToken(step.run, ctx))
    const r = await execa('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
      cwd,
      env,
      extendEnv: false,
      reject: false,
      all: true,
    })
    if (r.all) log(r.all.replace(/^/gm, '    | '))
    exitCode = r.exitCode ?? 1
    outputs = parseKv(readFileSync(files.GITHUB_OUTPUT, 'utf8'))
  } else if ('uses' in step) {
    const uses = step.uses.value
    if (uses.startsWith('./')) {
      const envFile = join(temp, '.env')
      writeFileSync(
        envFile,
        Object.entries(env)
          .filter(([k]) => /^(GITHUB_|RUNNER_|CI$)/.test(k) && !(k in files))
          .map(([k, v]) => `${k}=${v}`)
          .join('\n'),
      )
      const inputs = Object.entries(withs).map(([k, v]) => `${k}=${str(v)}`)
      const extra = Object.fromEntries(Object.entries(stepEnv).filter(([k]) => !/^(GITHUB_|RUNNER_)/.test(k)))
      const r = await execa(
        process.execPath,
        [
          join(opt.actionRoot, 'scripts/run-action.mjs'),
          '--action',
          resolve(workspace, uses),
          '--workspace',
          workspace,
          '--env',
          envFile,
          '--json',
          ...inputs,
        ],
        {
          cwd: workspace,
          reject: false,
          env: { PATH: env.PATH, HOME: env.HOME, ...engineEnv(), ...extra },
          extendEnv: false,
        },
      )
      const lines = r.stdout.trim().split('\n')
      const res = JSON.parse(lines.at(-1) ?? '{}') as {
        exitCode?: number
        outputs?: Record<string, string>
        summary?: string
      }
      for (const line of lines.slice(0, -1)) log(`    | ${line}`)
      if (r.stderr) log(r.stderr.replace(/^/gm, '    ! '))
      exitCode = res.exitCode ?? 1
      outputs = res.outputs ?? {}
      if (res.summary) summaries.push(res.summary)
    } else if (/^actions\/checkout@/.test(uses)) {
      const p = str(withs.path)
      if (p) {
        // A checkout of this repository into a sub-folder: link the action root there.
        const dest = resolve(workspace, p)
        if (!existsSync(dest)) {
          mkdirSync(dirname(dest), { recursive: true })
          symlinkSync(opt.actionRoot, dest)
        }
        log(`    (checkout ${str(withs.repository) || 'this repository'} → ${p}: linked ${opt.actionRoot})`)
      } else log('    (checkout: the workspace is already in place)')
    } else if (/^actions\/setup-node@/.test(uses)) {
      log(`    (no-op offline: ${uses})`)
    } else if (/^actions\/cache\/(restore|save)@/.test(uses)) {
      // Offline there is no cache service: a restore is a miss, a save stores nothing.
      outputs = uses.startsWith('actions/cache/restore@') ? { 'cache-hit': 'false' } : {}
      log(
        `    (offline: ${uses.split('@')[0]} — ${uses.startsWith('actions/cache/restore@') ? 'miss' : 'not saved'})`,
      )
    } else if (/^actions\/upload-artifact@/.test(uses)) {
      const r = uploadArtifact(withs, cwd)
      log(`    ${r.ok ? '' : 'error: '}${r.message}`)
      outputs = r.outputs ?? {}
      exitCode = r.ok ? 0 : 1
    } else if (/^actions\/download-artifact@/.test(uses)) {
      const r = downloadArtifact(withs, cwd)
      log(`    ${r.ok ? '' : 'error: '}${r.message}`)
      exitCode = r.ok ? 0 : 1
    } else {
      log(`    cannot run remote action offline: ${uses}`)
      exitCode = 1
    }
  }
  const s = readFileSync(files.GITHUB_STEP_SUMMARY, 'utf8')
  if (s) summaries.push(s)
  const result: Result = exitCode === 0 ? 'success' : 'failure'
  stepsCtx[step.id] = { outputs, outcome: result, conclusion: result }
  Object.assign(envVars, parseKv(readFileSync(files.GITHUB_ENV, 'utf8')))
  const local = 'uses' in step && step.uses.value.startsWith('./')
  return {
    result,
    outputs,
    ...(local ? { with: Object.fromEntries(Object.entries(withs).map(([k, v]) => [k, str(v)])) } : {}),
  }
}

async function runJobs(
  file: string,
  jobs: WorkflowJob[],
  inputs: Record<string, Json>,
  jobSecrets: Record<string, Json>,
  prefix: string,
): Promise<Map<string, JobRun>> {
  const done = new Map<string, JobRun>()
  const pending = [...jobs]
  const wfEnvToken = workflowEnv(file)
  while (pending.length > 0) {
    const idx = pending.findIndex((j) => (j.needs ?? []).every((n) => done.has(n.value)))
    if (idx < 0) throw new Error(`dependency cycle among ${pending.map((j) => j.id.value).join(', ')}`)
    const job = pending.splice(idx, 1)[0] as WorkflowJob
    const id = job.id.value
    const name = `${prefix}${id}`
    const needs: Record<string, Json> = Object.fromEntries(
      (job.needs ?? []).map((n) => [n.value, done.get(n.value) as unknown as Json]),
    )
    const failedNeeds = Object.values(needs).some((n) => (n as unknown as JobRun).result !== 'success')
    const ctx: Record<string, Json> = {
      github: githubContext(opt.workspace),
      inputs,
      needs,
      vars: {},
      secrets: jobSecrets,
      env: {},
      // This machine is not a GitHub-hosted runner: steps guarded on runner.environment see that.
      runner: { os: 'Linux', arch: 'X64', temp: tmpdir(), environment: 'self-hosted' },
    }
    const runIf = job.if ? evaluate(job.if.expression, ctx, { failed: failedNeeds }) : !failedNeeds
    if (!runIf) {
      log(`job ${name}: skipped`)
      done.set(id, { result: 'skipped', outputs: {} })
      continue
    }
    // A job assumed to succeed still runs only when its if: says so.
    if (opt.assume.has(name)) {
      log(`job ${name}: assumed success (--assume-success)`)
      done.set(id, { result: 'success', outputs: {} })
      continue
    }
    if (job.type === 'reusableWorkflowJob') {
      const defs = (evalToken(job['input-definitions'], ctx) ?? {}) as Record<
        string,
        { type?: string; default?: Json; required?: boolean }
      >
      const given = (evalToken(job['input-values'], ctx) ?? {}) as Record<string, Json>
      const calleeInputs: Record<string, Json> = {}
      for (const [k, d] of Object.entries(defs)) {
        let v = k in given ? (given[k] as Json) : (d.default ?? null)
        if (v === null && d.required) throw new Error(`${name}: required input ${k} not given`)
        if (d.type === 'number' && typeof v === 'string') v = Number(v)
        if (d.type === 'boolean' && typeof v === 'string') v = v === 'true'
        if (v === null) v = d.type === 'boolean' ? false : d.type === 'number' ? 0 : ''
        calleeInputs[k] = v
      }
      for (const k of Object.keys(given))
        if (!(k in defs)) throw new Error(`${name}: input ${k} is not defined by ${job.ref.value}`)
      const calleeSecrets = job['inherit-secrets']
        ? { ...jobSecrets }
        : {
            GITHUB_TOKEN: jobSecrets.GITHUB_TOKEN ?? '',
            ...((evalToken(job['secret-values'], ctx) ?? {}) as Record<string, Json>),
          }
      log(`job ${name}: calling ${job.ref.value} with ${JSON.stringify(calleeInputs)}`)
      const calleeFile = workflowFile(job.ref.value)
      const inner = await runJobs(calleeFile, job.jobs ?? [], calleeInputs, calleeSecrets, `${name}/`)
      const jobsCtx = Object.fromEntries([...inner].map(([k, v]) => [k, v as unknown as Json]))
      const outs = (evalToken(job.outputs, { ...ctx, inputs: calleeInputs, jobs: jobsCtx }) ?? {}) as Record<
        string,
        Json
      >
      const outputs = Object.fromEntries(
        Object.entries(outs).map(([k, v]) => [
          k,
          str(typeof v === 'object' && v && 'value' in v ? (v as { value: Json }).value : v),
        ]),
      )
      const result: Result = [...inner.values()].some((r) => r.result === 'failure') ? 'failure' : 'success'
      done.set(id, { result, outputs })
      log(`job ${name}: ${result} outputs=${JSON.stringify(outputs)}`)
      continue
    }
    let strategy: { matrix?: Json; 'fail-fast'?: boolean }
    let legs: (Record<string, Json> | null)[]
    try {
      strategy = (evalToken(job.strategy, ctx) ?? {}) as { matrix?: Json; 'fail-fast'?: boolean }
      legs = strategy.matrix === undefined ? [null] : expandMatrix(strategy.matrix)
    } catch (e) {
      // GitHub fails the job the same way: "Error when evaluating 'strategy' for job '<id>'".
      log(`job ${name}: failure (Error when evaluating 'strategy' for job '${id}': ${(e as Error).message})`)
      trace.push({ job: name, step: '(strategy)', result: 'failure' })
      done.set(id, { result: 'failure', outputs: {} })
      continue
    }
    const raws = rawSteps(file, id)
    let jobResult: Result = 'success'
    const outputs: Record<string, string> = {}
    for (const leg of legs) {
      const legName = leg ? `${name} (${Object.values(leg).map(str).join(', ')})` : name
      log(`job ${legName}: start`)
      // Every job starts on a fresh runner: a new workspace holding the repository (the --workspace
      // template), so anything another job wrote arrives only through artifacts and outputs.
      const workspace = mkdtempSync(join(tmpdir(), 'sim-ws-'))
      cpSync(opt.workspace, workspace, { recursive: true })
      workspaces.push(workspace)
      const stepsCtx: Record<string, Json> = {}
      const base = {
        ...ctx,
        github: githubContext(workspace),
        matrix: leg ?? {},
        strategy: { 'job-total': legs.length },
      }
      const envVars: Record<string, string> = {}
      for (const t of [wfEnvToken, job.env]) {
        const e = (evalToken(t as TemplateToken | undefined, base) ?? {}) as Record<string, Json>
        for (const [k, v] of Object.entries(e)) envVars[k] = str(v)
      }
      let failed = false
      for (const [i, step] of job.steps.entries()) {
        const sctx = { ...base, steps: stepsCtx, env: envVars }
        const stepIf = step.if ? evaluate(step.if.expression, sctx, { failed }) : !failed
        if (!stepIf) {
          stepsCtx[step.id] = { outputs: {}, outcome: 'skipped', conclusion: 'skipped' }
          continue
        }
        log(`  step ${step.id}${'uses' in step ? ` (uses ${step.uses.value})` : ''}`)
        const r = await runStep(workspace, id, step, raws[i], sctx, stepsCtx, envVars)
        trace.push({
          job: legName,
          step: step.id,
          result: r.result,
          outputs: r.outputs,
          ...(r.with ? { with: r.with } : {}),
        })
        // continue-on-error: the step's outcome stays failure, its conclusion is success and the job goes on.
        const coe = step['continue-on-error']
        const goOn =
          coe === true || (coe !== undefined && coe !== false && str(evalToken(coe, sctx)) === 'true')
        if (r.result === 'failure' && goOn) {
          stepsCtx[step.id] = { ...(stepsCtx[step.id] as Record<string, Json>), conclusion: 'success' }
          log(`    (continue-on-error: the job goes on)`)
        } else if (r.result === 'failure') failed = true
      }
      const legOutputs = (evalToken(job.outputs, { ...base, steps: stepsCtx }) ?? {}) as Record<string, Json>
      // GitHub keeps the outputs of whichever leg finished last; here: the last leg that set them.
      for (const [k, v] of Object.entries(legOutputs)) if (str(v) !== '') outputs[k] = str(v)
      if (failed) jobResult = 'failure'
      log(`job ${legName}: ${failed ? 'failure' : 'success'}`)
      if (failed && strategy['fail-fast'] !== false && legs.length > 1) break
    }
    done.set(id, { result: jobResult, outputs })
  }
  return done
}

/** A user mistake (no such file, a workflow that does not parse): one message, no stack trace. */
function fail(message: string): never {
  log(`error: ${message}`)
  if (opt.json) console.log(JSON.stringify({ conclusion: 'invalid', error: message }))
  process.exit(2)
}

const wfFile = isAbsolute(opt.workflow)
  ? opt.workflow
  : workflowFile(`./${opt.workflow.replace(/^\.\//, '')}`)
if (!opt.workflow || !existsSync(wfFile)) fail(`no workflow file ${opt.workflow || '(none given)'}`)
const parsed = parseWorkflow(
  { name: wfFile, content: readFileSync(wfFile, 'utf8') },
  new NoOperationTraceWriter(),
)
const errs = parsed.context.errors.getErrors()
if (errs.length > 0) fail(`${opt.workflow} does not parse:\n${errs.map((e) => `  ${e.message}`).join('\n')}`)
const tpl = await convertWorkflowTemplate(
  parsed.context,
  parsed.value as TemplateToken,
  {
    getFileContent: async (ref) => {
      const p =
        'owner' in ref
          ? workflowFile(`${ref.owner}/${ref.repository}/${ref.path}@${ref.version}`)
          : workflowFile(`./${ref.path}`)
      return { name: p, content: readFileSync(p, 'utf8') }
    },
  },
  { fetchReusableWorkflowDepth: 2 },
)
if (tpl.errors?.length)
  fail(`${opt.workflow} is not a valid workflow:\n${tpl.errors.map((e) => `  ${e.Message}`).join('\n')}`)
// A workflow_call workflow run directly takes its inputs from --input (typed by its definitions).
const topInputs: Record<string, Json> = {}
const callDefs =
  (tpl.events.workflow_call as { inputs?: Record<string, { type?: string; default?: Json }> } | undefined)
    ?.inputs ?? {}
for (const [k, d] of Object.entries(callDefs)) {
  const v = k in opt.inputs ? (opt.inputs[k] as string) : d.default
  topInputs[k] =
    d.type === 'number' ? Number(v ?? 0) : d.type === 'boolean' ? String(v) === 'true' : (v ?? '')
}
// GitHub refuses a run whose reusable-workflow calls ask for more than they grant, before any job.
// A publish job that gets the caller's grant and lacks its write starts, and fails at that write.
const { errors: permissionErrors, publishErrors, secretErrors } = loadTimePermissionErrors(wfFile)
for (const e of [...publishErrors, ...secretErrors]) log(`${opt.checkOnly ? 'error' : 'warning'}: ${e}`)
if (opt.checkOnly || permissionErrors.length > 0) {
  for (const e of permissionErrors) log(`error: ${e}`)
  const conclusion =
    permissionErrors.length > 0
      ? 'startup_failure'
      : publishErrors.length + secretErrors.length > 0
        ? 'failure'
        : 'success'
  if (opt.json) console.log(JSON.stringify({ conclusion, permissionErrors, publishErrors, secretErrors }))
  else if (conclusion === 'success')
    console.log(
      `ok: ${opt.workflow}: every call grants what its jobs need and passes what its manifest reads`,
    )
  process.exit(conclusion === 'success' ? 0 : 1)
}
const results = await runJobs(wfFile, tpl.jobs, topInputs, secrets, '')
const conclusion = [...results.values()].some((r) => r.result === 'failure') ? 'failure' : 'success'
if (opt.json) {
  console.log(
    JSON.stringify({
      conclusion,
      jobs: Object.fromEntries(results),
      steps: trace,
      summaries,
      artifacts: artifactStore,
      workspaces,
    }),
  )
} else if (conclusion === 'success')
  console.log(`ok: ${opt.workflow}: ${results.size} job${results.size === 1 ? '' : 's'}, success`)
else log(`workflow ${opt.workflow}: ${conclusion}`)
process.exitCode = conclusion === 'success' ? 0 : 1
