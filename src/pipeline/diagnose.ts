import { createHash } from 'node:crypto'
import { appendFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { type Decision, DecisionSchema } from '../detect/schema.js'
import { readReport, runAnalyst } from '../diagnose/analyst.js'
import { buildDossier, type LoadedAttempt } from '../diagnose/dossier.js'
import { dossierHtmlSection, withDossierSection } from '../diagnose/html.js'
import { manifestPatch } from '../diagnose/manifest-patch.js'
import { renderAnalystMarkdown, renderDossierMarkdown } from '../diagnose/markdown.js'
import { type Dossier, type ProposalFile, ProposalFileSchema } from '../diagnose/schema.js'
import { type DiagnosisSummary, reportDiagnosisSection, withReportDiagnosis } from '../diagnose/summary.js'
import type { AnalystPort } from '../dialogue/analyst-port.js'
import { isHarborJob } from '../ingest/published/harbor.js'
import { type AttemptRecord, AttemptRecordSchema } from '../records/attempt.js'
import { ComparisonSchema } from '../records/comparison.js'
import { type LedgerRow, LedgerRowSchema } from '../records/ledger.js'
import { codeSpan } from '../report/escape.js'
import { checkedAtif } from '../trajectory/atif.js'
import { normalizeAtif } from '../trajectory/from/atif.js'
import { normalizeTrajectory } from '../trajectory/read.js'
import { HwError } from '../util/errors.js'
import { strictJson } from '../util/json.js'
import { quotePath } from '../util/paths.js'
import { readInside } from '../util/safe-read.js'
import { loadHarborAttempts } from './diagnose-harbor.js'

export interface DiagnoseOptions {
  /** A run folder (comparison.json, artifacts/); its latest confirm-<n>/ round is used when present. */
  dir: string
  /**
   * The round's comparison.json when it is not in the round folder (`confirm --out` elsewhere: the
   * decision and reports are in `dir`, the comparison, plan.json and artifacts/ beside this file).
   */
  comparison?: string
  /** The round's artifacts folder; default `artifacts/` beside the comparison. */
  artifacts?: string
  maxInstances?: number
  /** When given, the analyst answers from the dossier tools and diagnosis/proposal.json is written. */
  analyst?: AnalystPort
  /**
   * Answers instead when `analyst` produced no answer in any try (a harness that could not run); the
   * proposal's `analyst.fallback` says why.
   */
  fallback?: AnalystPort
  /** The repository root the plan's manifest_file is relative to (default: the current folder). */
  repoRoot?: string
  log?: (line: string) => void
}

/** The proposed experiment as a patch of the manifest file, beside the dossier. */
export const PROPOSAL_PATCH = 'proposal.patch'

/**
 * diagnosis/proposal.patch: the proposal's candidate cell as a unified diff of the manifest file the
 * run's plan.json names — found relative to `repoRoot` (the repository root, where the run started)
 * and only when its sha256 is the one the plan recorded — or why there is none.
 */
async function writeProposalPatch(
  opts: DiagnoseOptions,
  roundDir: string,
  outDir: string,
  proposal: ProposalFile,
): Promise<DiagnosisSummary['patch']> {
  const answer = proposal.answer
  if (!answer) return undefined
  const root = path.resolve(opts.repoRoot ?? process.cwd())
  let plan: { manifest_file?: unknown; manifest_sha256?: unknown } | null = null
  const dirs = [roundDir, ...(opts.comparison ? [path.dirname(opts.comparison)] : []), opts.dir]
  for (const p of dirs.map((d) => path.join(d, 'plan.json'))) {
    plan = await readFile(p, 'utf8')
      .then((t) => JSON.parse(t) as typeof plan)
      .catch(() => null)
    if (plan) break
  }
  if (!plan || typeof plan.manifest_file !== 'string')
    return { unavailable: 'no plan.json names the manifest file' }
  const abs = path.resolve(root, plan.manifest_file)
  const rel = path.relative(root, abs).split(path.sep).join('/')
  if (rel.startsWith('../') || path.isAbsolute(rel))
    return { unavailable: `the manifest ${plan.manifest_file} lies outside ${root}` }
  const bytes = await readFile(abs).catch(() => null)
  if (!bytes) return { unavailable: `the manifest ${rel} is not in ${root}` }
  if (createHash('sha256').update(bytes).digest('hex') !== plan.manifest_sha256)
    return { unavailable: `${rel} changed since the run (its sha256 is not the plan's)` }
  const r = manifestPatch({
    text: bytes.toString('utf8'),
    file: rel,
    fragment: answer.single_variable_experiment.manifest_patch,
  })
  if (!r.ok) return { unavailable: r.reason }
  await writeFile(path.join(outDir, PROPOSAL_PATCH), r.diff)
  opts.log?.(
    `diagnosis: the proposed experiment as a patch of ${rel} → ${quotePath(path.join(outDir, PROPOSAL_PATCH))}`,
  )
  return { path: `diagnosis/${PROPOSAL_PATCH}`, manifest: rel, diff: r.diff }
}

export interface DiagnoseResult {
  /** The round folder the dossier describes (the confirmation round when one ran). */
  roundDir: string
  dossierJson: string
  dossierMd: string
  dossier: Dossier
  proposal: ProposalFile | null
}

/**
 * `harness-watch diagnose <run dir>`: read the final round's comparison.json, decision.json and
 * artifacts, map the driving attempts' trajectories, and write diagnosis/dossier.json and
 * diagnosis/dossier.md beside the final report. Unreadable attempt or ledger lines and bad
 * trajectories are named in the dossier's notes; they never stop it. Throws HwError
 * `diagnose_input_invalid` when there is no readable comparison.json.
 */
export async function diagnoseRun(opts: DiagnoseOptions): Promise<DiagnoseResult> {
  const roundDir = opts.comparison ? path.resolve(opts.dir) : await finalRoundDir(opts.dir)
  const cmpPath = opts.comparison ?? path.join(roundDir, 'comparison.json')
  let comparison: ReturnType<typeof ComparisonSchema.parse>
  try {
    comparison = ComparisonSchema.parse(JSON.parse(await readFile(cmpPath, 'utf8')))
  } catch (e) {
    throw new HwError('diagnose_input_invalid', `no readable comparison.json at ${quotePath(cmpPath)}`, {
      help: `run \`harness-watch aggregate\` first (${String((e as Error).message).split('\n')[0]})`,
    })
  }
  const notes: string[] = []
  const decision = await readDecision(path.join(roundDir, 'decision.json'), notes)
  const outDir = path.join(roundDir, 'diagnosis')
  const wanted = new Set<string>()
  for (const c of comparison.comparisons)
    for (const d of c.drivers) {
      wanted.add(`${c.baseline}\0${d.instance}`)
      wanted.add(`${c.treatment}\0${d.instance}`)
    }
  const artifacts = opts.artifacts ?? path.join(path.dirname(cmpPath), 'artifacts')
  // The attempts of a run are its artifacts: without them the dossier would hold no trajectory at
  // all, so a missing folder is the user's to fix (as for aggregate), never an empty dossier.
  if (
    comparison.kind !== 'published' &&
    !(await stat(artifacts).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    throw new HwError('diagnose_input_invalid', `no artifacts folder at ${quotePath(artifacts)}`, {
      help: "pass --artifacts <dir>: the folder the round's leg artifacts were downloaded into",
    })
  // A comparison of published results read from a Harbor job: the job folder holds the attempts.
  const attempts =
    comparison.kind === 'published' && (await isHarborJob(artifacts))
      ? await loadHarborAttempts(artifacts, comparison, outDir, wanted, notes)
      : await loadAttempts(artifacts, outDir, wanted, notes)
  const dossier = buildDossier({ comparison, decision, attempts, maxInstances: opts.maxInstances, notes })
  await mkdir(outDir, { recursive: true })
  const atifLinks = await writeAtif(outDir, attempts, notes)
  const dossierJson = path.join(outDir, 'dossier.json')
  const dossierMd = path.join(outDir, 'dossier.md')
  await writeFile(dossierJson, strictJson(dossier))
  await writeFile(dossierMd, renderDossierMarkdown(dossier) + atifSection(atifLinks))
  // report.html (written before the dossier existed) links each driving instance to its timelines.
  const htmlPath = path.join(roundDir, 'report.html')
  const html = await readFile(htmlPath, 'utf8').catch(() => null)
  if (html !== null) await writeFile(htmlPath, withDossierSection(html, dossierHtmlSection(dossier)))
  const n = dossier.comparisons.reduce((s, c) => s + c.instances.length, 0)
  opts.log?.(
    `diagnosis: ${n} driving instance(s), ${Object.keys(dossier.attempts).length} attempt(s) → ${quotePath(dossierJson)}`,
  )
  let proposal: ProposalFile | null = null
  if (opts.analyst && n > 0) {
    const report = await readReport(roundDir)
    proposal = await runAnalyst({ dossier, dir: outDir, report, port: opts.analyst })
    if (opts.fallback && proposal.answer === null && opts.analyst.answered?.() === 0) {
      const reason = `${proposal.analyst.route} gave no answer (${proposal.grounding.problems.join('; ')})`
      opts.log?.(`diagnosis: ${reason}; the in-process ${opts.fallback.route} analyst answers instead`)
      proposal = await runAnalyst({ dossier, dir: outDir, report, port: withFallback(opts.fallback, reason) })
    }
    await appendFile(dossierMd, renderAnalystMarkdown(proposal))
    opts.log?.(
      `diagnosis: proposal ${proposal.grounding.status} after ${proposal.grounding.attempts} answer(s) (analyst ${proposal.analyst.route}, spend reported apart) → ${quotePath(path.join(outDir, 'proposal.json'))}`,
    )
  }
  const patch = proposal?.answer ? await writeProposalPatch(opts, roundDir, outDir, proposal) : undefined
  await writeReportDiagnosis(roundDir, { proposal, dossierPath: 'diagnosis/dossier.md', patch })
  return { roundDir, dossierJson, dossierMd, dossier, proposal }
}

/**
 * Link and quote the diagnosis in the round's report.md (when there is one): the dossier, the
 * hypothesis and the proposed experiment. With `summary` null, the report says the diagnosis is
 * missing (`missing` says why) and nothing else in it changes.
 */
export async function writeReportDiagnosis(
  roundDir: string,
  summary: DiagnosisSummary | null,
  missing?: string,
): Promise<void> {
  const reportPath = path.join(roundDir, 'report.md')
  const md = await readFile(reportPath, 'utf8').catch(() => null)
  if (md === null) return
  await writeFile(reportPath, withReportDiagnosis(md, reportDiagnosisSection(summary, missing)))
}

/** `port` answering as the fallback analyst: proposal.json's `analyst.fallback` carries `reason`. */
function withFallback(port: AnalystPort, reason: string): AnalystPort {
  return { route: port.route, answer: (s) => port.answer(s), describe: () => ({ fallback: reason }) }
}

/** `<dir>/confirm-<n>` with the highest n holding a comparison.json, else `dir`. */
export async function finalRoundDir(dir: string): Promise<string> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
  const rounds = entries
    .filter((e) => e.isDirectory() && /^confirm-\d+$/.test(e.name))
    .map((e) => ({ name: e.name, n: Number(e.name.slice(8)) }))
    .sort((a, b) => b.n - a.n)
  for (const r of rounds) {
    const p = path.join(dir, r.name)
    if (
      await readFile(path.join(p, 'comparison.json')).then(
        () => true,
        () => false,
      )
    )
      return p
  }
  return dir
}

async function readDecision(file: string, notes: string[]): Promise<Decision | null> {
  const text = await readFile(file, 'utf8').catch(() => null)
  if (text === null) return null
  try {
    return DecisionSchema.parse(JSON.parse(text))
  } catch {
    notes.push(`decision.json could not be read (another version?): statuses are left out`)
    return null
  }
}

async function loadAttempts(
  artifacts: string,
  outDir: string,
  wanted: Set<string>,
  notes: string[],
): Promise<LoadedAttempt[]> {
  const legs = await readdir(artifacts, { withFileTypes: true }).catch(() => [])
  const out: LoadedAttempt[] = []
  /**
   * A file of the artifacts, read only as a regular file inside the folder reached through no
   * symbolic link (paths from records are untrusted); null when missing, or refused with a note.
   */
  const read = async (rel: string, what: string): Promise<Buffer | null> => {
    const r = await readInside(artifacts, rel)
    if (r === 'missing') return null
    if ('refused' in r) {
      notes.push(`${what}: ${r.refused}`)
      return null
    }
    return r.bytes
  }
  for (const leg of legs.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const legDir = await legFolder(path.join(artifacts, leg.name))
    const legRel = path.relative(artifacts, legDir).split(path.sep).join('/')
    const records: AttemptRecord[] = []
    const attemptsText =
      (await read(`${legRel}/attempts.jsonl`, `${leg.name}/attempts.jsonl`))?.toString('utf8') ?? ''
    for (const [i, line] of attemptsText.split('\n').entries()) {
      if (line.trim() === '') continue
      const r = safeJson(line, AttemptRecordSchema)
      if (r) records.push(r)
      else notes.push(`${leg.name}/attempts.jsonl:${i + 1}: not a valid attempt record (left out)`)
    }
    const needed = records.filter((r) => r.final && wanted.has(`${r.cell_id}\0${r.instance_id}`))
    if (needed.length === 0) continue
    const ledger = new Map<string, LedgerRow[]>()
    const ledgerText =
      (await read(`${legRel}/ledger.jsonl`, `${leg.name}/ledger.jsonl`))?.toString('utf8') ?? ''
    for (const [i, line] of ledgerText.split('\n').entries()) {
      if (line.trim() === '') continue
      const row = safeJson(line, LedgerRowSchema)
      if (!row) {
        notes.push(`${leg.name}/ledger.jsonl:${i + 1}: not a valid ledger row (left out of request curves)`)
        continue
      }
      const a = row.attribution
      if (!a || a.role === 'user_simulation') continue
      const k = `${a.cell_id}\0${a.instance_id}\0${a.trial}\0${a.attempt}`
      const list = ledger.get(k) ?? []
      list.push(row)
      ledger.set(k, list)
    }
    for (const r of needed) {
      // logs_dir comes from the record: every file under it is read only inside the leg folder.
      const logsRel = `${legRel}/${r.logs_dir}`
      const what = `${leg.name} ${r.cell_id}/${r.instance_id} trial ${r.trial} attempt ${r.attempt} logs_dir`
      const logsInside = !r.logs_dir.split(/[\\/]+/).includes('..') && !path.isAbsolute(r.logs_dir)
      if (!logsInside) notes.push(`${what}: ${r.logs_dir} leads out of the leg folder: refused`)
      const logFile = (name: string) =>
        logsInside ? read(`${logsRel}/${name}`, what) : Promise.resolve(null)
      const logs = path.join(legDir, logsInside ? r.logs_dir : '.')
      const bytes = await logFile('trajectory.jsonl')
      const ref = {
        cell: r.cell_id,
        instance: r.instance_id,
        trial: r.trial,
        attempt: r.attempt,
        startedAtMs: Number.isFinite(Date.parse(r.started_at)) ? Date.parse(r.started_at) : null,
      }
      // A harness run inside Harbor leaves an ATIF document (agent/trajectory.json) instead.
      const atif =
        bytes === null ? ((await logFile('agent/trajectory.json'))?.toString('utf8') ?? null) : null
      out.push({
        record: r,
        logsDir: path.relative(outDir, logs),
        trajectory:
          atif !== null
            ? normalizeAtif(atif, r.harness, ref)
            : normalizeTrajectory(bytes === null ? null : new Uint8Array(bytes), r.harness, ref),
        requests: ledger.get(`${r.cell_id}\0${r.instance_id}\0${r.trial}\0${r.attempt}`) ?? [],
        patch: (await logFile('patch.diff'))?.toString('utf8') ?? '',
        verifierLog: (await logFile('verifier.log'))?.toString('utf8') ?? null,
      })
    }
  }
  return out
}

/**
 * Every loaded attempt's trajectory as ATIF v1.7 under diagnosis/atif/, metrics from its proxy requests;
 * a document that fails ATIF's field rules is not written (the note says why). Returns the links.
 */
async function writeAtif(
  outDir: string,
  attempts: LoadedAttempt[],
  notes: string[],
): Promise<{ key: string; file: string }[]> {
  const dir = path.join(outDir, 'atif')
  await mkdir(dir, { recursive: true })
  const links: { key: string; file: string }[] = []
  for (const a of attempts) {
    const r = a.record
    const key = `${r.cell_id}/${r.instance_id}/${r.trial}-${r.attempt}`
    const { doc, error } = checkedAtif({
      sessionId: key,
      harness: r.harness,
      harnessVersion: r.harness_version ?? null,
      model:
        a.requests.find((q) => q.model_observed ?? q.model)?.model_observed ?? a.requests[0]?.model ?? null,
      startedAtMs: Number.isFinite(Date.parse(r.started_at)) ? Date.parse(r.started_at) : null,
      trajectory: a.trajectory,
      requests: a.requests,
    })
    if (doc === null) {
      notes.push(`${key}: its ATIF document breaks a field rule (${error}); not written`)
      continue
    }
    const file = `${key.replace(/[^A-Za-z0-9._-]+/g, '_')}.json`
    await writeFile(path.join(dir, file), strictJson(doc))
    links.push({ key, file: `atif/${file}` })
  }
  return links
}

function atifSection(links: { key: string; file: string }[]): string {
  if (links.length === 0) return ''
  const rows = links.map((l) => `- [${codeSpan(l.key)}](${l.file})`)
  return `\n## Trajectories (ATIF v1.7)\n\nEach attempt's normalized trajectory in Harbor's interchange format; step metrics come from the proxy ledger.\n\n${rows.join('\n')}\n`
}

/** The leg folder itself, or its single sub-folder holding attempts.jsonl (a downloaded artifact). */
async function legFolder(dir: string): Promise<string> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
  if (entries.some((e) => e.isFile() && e.name === 'attempts.jsonl')) return dir
  const subs = entries.filter((e) => e.isDirectory())
  return subs.length === 1 && subs[0] ? path.join(dir, subs[0].name) : dir
}

function safeJson<T>(
  line: string,
  schema: { safeParse(v: unknown): { success: boolean; data?: T } },
): T | null {
  try {
    const r = schema.safeParse(JSON.parse(line))
    return r.success ? (r.data as T) : null
  } catch {
    return null
  }
}

/**
 * The diagnosis written beside a decision (diagnosis/dossier.json, and proposal.json when an analyst
 * ran), for publishing; null when there is no dossier. A proposal that does not validate is dropped.
 */
export async function readDiagnosis(roundDir: string): Promise<DiagnosisSummary | null> {
  const dir = path.join(roundDir, 'diagnosis')
  if (
    !(await readFile(path.join(dir, 'dossier.json')).then(
      () => true,
      () => false,
    ))
  )
    return null
  const text = await readFile(path.join(dir, 'proposal.json'), 'utf8').catch(() => null)
  let proposal: ProposalFile | null = null
  if (text !== null) proposal = safeJson(text, ProposalFileSchema)
  const diff = await readFile(path.join(dir, PROPOSAL_PATCH), 'utf8').catch(() => null)
  const manifest = diff === null ? null : (/^--- a\/(\S+)$/m.exec(diff)?.[1] ?? null)
  return {
    proposal,
    dossierPath: 'diagnosis/dossier.md',
    ...(diff !== null && manifest ? { patch: { path: `diagnosis/${PROPOSAL_PATCH}`, manifest, diff } } : {}),
  }
}
