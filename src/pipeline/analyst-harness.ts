import { mkdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import type { AnalystPort, AnalystReply, AnalystRun, AnalystSession } from '../dialogue/analyst-port.js'
import type { InstalledHarness } from '../harnesses/contract.js'
import { defaultCacheDir } from '../harnesses/install.js'
import { wireBridge } from '../harnesses/mcp.js'
import { adapterFor } from '../harnesses/registry.js'
import { type HarnessName, isHarnessName } from '../manifest/harness-names.js'
import { type Cell, cellApi, type Manifest, ManifestSchema, primaryRoute } from '../manifest/schema.js'
import type { Isolation } from '../records/isolation.js'
import type { Attribution } from '../records/ledger.js'
import { harnessPorts, loopbackPorts } from '../run/attempt.js'
import { harnessWatchReadable } from '../run/bridge.js'
import { harnessEnv } from '../run/env.js'
import { openRunTelemetry, type RunTelemetry } from '../run/telemetry-setup.js'
import { makeAttemptDirs } from '../run/workspace.js'
import { chooseSandbox } from '../sandbox/select.js'
import { HwError } from '../util/errors.js'
import { quotePath } from '../util/paths.js'

/**
 * Flags that leave a harness only the dossier tools (no shell, no edits): the analyst is read-only.
 * A harness is offered as the analyst only when it is listed here and has a bridge recipe.
 * Pi 0.73.1: `--no-builtin-tools` disables read/bash/edit/write and keeps extension tools (the bridge).
 */
export const READ_ONLY_ARGS: Partial<Record<HarnessName, string[]>> = {
  pi: ['--no-builtin-tools'],
}

/** The instance id the analyst's proxy requests carry (attribution role "analyst"). */
export const ANALYST_INSTANCE = 'diagnosis'

export interface HarnessAnalystOptions {
  manifest: Manifest
  /** The diagnosis folder: the analyst's ledger and logs go to `analyst/` inside it. */
  diagnosisDir: string
  runId: string
  /** Harness install cache (default ~/.cache/harness-watch). */
  cacheDir?: string
  /** Runner environment: only the model route's variables are read from it; the harness never sees it. */
  env?: NodeJS.ProcessEnv
  /** Folder for the attempt's workspace and home (removed after each try); default diagnosis/analyst/work. */
  workRoot?: string
  log?: (line: string) => void
}

/** The cell whose harness runs the analyst: the baseline first, then the other cells in order. */
export function analystCell(m: Manifest): Cell | null {
  const cells = [...m.cells].sort((a, b) => Number(b.id === m.baseline) - Number(a.id === m.baseline))
  return cells.find((c) => readOnlyArgs(c.harness) !== null) ?? null
}

/** The read-only flags of `harness`, or null when it cannot serve as the analyst. */
function readOnlyArgs(harness: string): string[] | null {
  return isHarnessName(harness) ? (READ_ONLY_ARGS[harness] ?? null) : null
}

/** The analyst's prompt: the task, the answer's shape, and why an earlier answer was rejected. */
export function analystPrompt(feedback: string[]): string {
  const lines = [
    'You are reviewing a confirmed difference between two coding-agent harnesses.',
    'Use only the dossier tools (list_pairs, view_timeline, view_patch, view_test_progress, view_request_curve).',
    'Answer with one JSON object and nothing else, with the keys: hypothesis, alternative_hypotheses,',
    'category, supporting_evidence (instance, cell, event_ids, claim), counterevidence, estimated_impact,',
    'affected_instances, predicted_observable_change, single_variable_experiment (variable, current_value,',
    'proposed_value, manifest_patch, metric, expected_direction).',
    'manifest_patch is YAML `cells:` with the candidate cell: id `<treatment cell id>-candidate` and only the',
    'fields that change (the rest is copied from the treatment cell into a patch of the manifest file).',
    'Cite only event ids the tools returned, and quote only numbers the tools returned.',
  ]
  if (feedback.length > 0) lines.push('Your previous answer was rejected:', ...feedback.map((f) => `- ${f}`))
  return lines.join('\n')
}

/**
 * The JSON object of a final message: the whole text, else the text inside a ```json fence, else from
 * the first `{` to the last `}`. Throws when none parses.
 */
export function answerFromMessage(text: string): unknown {
  const tries = [text.trim()]
  const fence = /```(?:json)?\s*([\s\S]*?)```/.exec(text)
  if (fence?.[1]) tries.push(fence[1].trim())
  const a = text.indexOf('{')
  const b = text.lastIndexOf('}')
  if (a >= 0 && b > a) tries.push(text.slice(a, b + 1))
  for (const t of tries) {
    try {
      return JSON.parse(t)
    } catch {
      // the next form
    }
  }
  throw new Error(`the final message is not a JSON object: ${JSON.stringify(text.slice(0, 120))}`)
}

export interface HarnessAnalyst extends AnalystPort {
  /** Tries in which the harness produced a final message (0: the harness path failed). */
  answered(): number
  /** Stop the analyst's recording proxy (and scripted model). Idempotent. */
  close(): Promise<void>
}

/**
 * The analysis agent run through one of the product's harness adapters (point 4 of the diagnosis): the
 * manifest's analyst cell harness (`analystCell`), read-only (`READ_ONLY_ARGS`), in the run's sandbox
 * backend, on the manifest's model route through its own recording proxy, each request attributed
 * with role "analyst" (cell "analyst", instance "diagnosis", attempt = try) and written to
 * `diagnosis/analyst/ledger.jsonl` — never to a leg's ledger — so its spend is reported apart. The
 * dossier tools reach it over MCP (the bridge recipe with the session's Streamable HTTP endpoint).
 * Returns null when no cell's harness can serve as the analyst. `answer` throws when the harness
 * cannot be installed, started, or ends without a final JSON message (the caller records the try).
 */
export function harnessAnalyst(opts: HarnessAnalystOptions): HarnessAnalyst | null {
  const m = opts.manifest
  const cell = analystCell(m)
  if (!cell) return null
  const adapter = adapterFor(cell.harness)
  const harness = cell.harness as HarnessName
  const args = readOnlyArgs(harness) ?? []
  // Absolute: `diagnose out/demo --analyst harness` names a relative folder, and a sandbox takes
  // absolute paths only.
  const dir = path.resolve(opts.diagnosisDir, 'analyst')
  const workRoot = path.resolve(opts.workRoot ?? path.join(dir, 'work'))
  const env = opts.env ?? process.env
  let telemetry: RunTelemetry | null = null
  let installed: InstalledHarness | null = null
  let isolation: string | undefined
  let tries = 0
  let answered = 0
  return {
    route: `harness:${cell.harness}`,
    answered: () => answered,
    describe(): AnalystRun {
      return {
        harness: `${cell.harness}@${cell.version}`,
        ...(isolation ? { isolation } : {}),
        ledger: 'analyst/ledger.jsonl',
      }
    },
    async close() {
      const t = telemetry
      telemetry = null
      await t?.close()
      // The attempt folders are removed after each try; the default root goes too (logs stay).
      if (!opts.workRoot) await rm(workRoot, { recursive: true, force: true })
    },
    async answer(session: AnalystSession): Promise<AnalystReply> {
      tries++
      await mkdir(dir, { recursive: true })
      const sandbox = await chooseSandbox(m.sandbox, workRoot)
      isolation = sandbox.backend.kind
      installed ??= await adapter.install(cell.version, {
        cacheDir: opts.cacheDir ?? defaultCacheDir(env),
        log: opts.log ?? (() => {}),
        sandbox: sandbox.backend,
      })
      telemetry ??= await openRunTelemetry({
        manifest: m,
        tasksDir: null,
        runId: opts.runId,
        journalFile: path.join(dir, 'ledger.jsonl'),
        env,
      })
      const attribution: Attribution = {
        experiment_id: m.experiment.id,
        run_id: opts.runId,
        cell_id: 'analyst',
        instance_id: ANALYST_INSTANCE,
        trial: 0,
        attempt: tries,
        role: 'analyst',
      }
      const tel = await telemetry.capture.begin(attribution, {
        maxSpendUsd: m.budgets.max_spend_usd,
        maxRequests: m.budgets.max_requests,
      })
      const dirs = await makeAttemptDirs(workRoot)
      const stdoutFile = path.join(dir, `try-${tries}.stdout.txt`)
      const stderrFile = path.join(dir, `try-${tries}.stderr.txt`)
      try {
        const ctx = {
          workspace: dirs.workspace,
          home: dirs.home,
          tmp: dirs.tmp,
          prompt: analystPrompt(session.feedback),
          model: primaryRoute(m).id,
          api: cellApi(cell, primaryRoute(m)),
          endpoint: tel.endpoint,
          config: { args, env: {}, pass_env: [], files: {} },
          timeoutS: m.budgets.timeout_s,
          prices: primaryRoute(m).prices,
        }
        const prepared = await adapter.prepare(installed, ctx)
        const { invocation: inv } = await wireBridge(harness, prepared, ctx, {
          kind: 'http',
          url: session.bridgeUrl,
        })
        // Only the harness's own variables: no runner secret reaches the analyst.
        const runEnv = harnessEnv({ dirs, runnerEnv: {}, invocationEnv: inv.env, configEnv: {}, passEnv: [] })
        const box = await sandbox.backend.open({
          writable: [dirs.workspace, dirs.home],
          // The Pi bridge extension loads the MCP SDK from Harness Watch's own folder, or from the
          // bundle's dist/pi-bridge-sdk beside the CLI bundle (hidden in a clone under /tmp otherwise).
          readOnly: [installed.root, ...harnessWatchReadable()],
          // Under an isolating backend only the recording proxy and the analyst's tool-bridge are reachable.
          loopbackPorts: analystPorts(tel.endpoint.origin, session.bridgeUrl, sandbox.backend.kind),
        })
        let run: Awaited<ReturnType<typeof box.exec>>
        try {
          run = await box.exec(
            { command: inv.command, args: inv.args, cwd: inv.cwd, env: runEnv.env, stdin: inv.stdin },
            {
              timeoutMs: m.budgets.timeout_s * 1000,
              graceMs: 5000,
              stdoutFile,
              stderrFile,
              sweepHome: dirs.home,
            },
          )
        } finally {
          await box.close()
        }
        const captured = await tel.finish()
        const stdout = await readFile(stdoutFile, 'utf8').catch(() => '')
        const stderr = await readFile(stderrFile, 'utf8').catch(() => '')
        const requests = captured.summary.proxy_requests
        const spend = captured.summary.spend_usd
        const notes = [
          `try ${tries}: ${cell.harness}@${cell.version} (${isolation}) exit ${run.exitCode ?? run.signal ?? 'none'}${run.timedOut ? ' (timed out)' : ''}, ${requests ?? 'unknown'} proxy request(s), spend ${spend === null ? 'unknown' : `$${spend}`}`,
        ]
        if (run.spawnError) throw new Error(`the harness could not be started: ${run.spawnError}`)
        const parsed = await adapter.parse(
          { stdout, stderr, exitCode: run.exitCode, signal: run.signal, home: dirs.home },
          ctx,
        )
        if (parsed.finalMessage === null) {
          const tail = stderr.trim().split('\n').slice(-1)[0] ?? ''
          throw new Error(
            `${cell.harness} ended without a final message (exit ${run.exitCode ?? run.signal}${tail ? `: ${tail.slice(0, 200)}` : ''})`,
          )
        }
        answered++
        return { answer: answerFromMessage(parsed.finalMessage), requests, spend_usd: spend, notes }
      } finally {
        await rm(dirs.workspace, { recursive: true, force: true })
        await rm(dirs.home, { recursive: true, force: true })
      }
    },
  }
}

/**
 * The harness analyst of a finished run folder (`harness-watch diagnose --analyst harness`): the
 * manifest is the one recorded in `<dir>/plan.json`, the run id the one of the round's
 * comparison.json. Throws HwError `diagnose_input_invalid` when plan.json holds no valid manifest or
 * no cell's harness can serve as the analyst.
 */
export async function harnessAnalystForRun(
  dir: string,
  roundDir: string,
  opts: Pick<HarnessAnalystOptions, 'cacheDir' | 'env' | 'log'> = {},
): Promise<HarnessAnalyst> {
  const planPath = path.join(dir, 'plan.json')
  let manifest: Manifest
  try {
    manifest = ManifestSchema.parse(
      (JSON.parse(await readFile(planPath, 'utf8')) as { manifest?: unknown }).manifest,
    )
  } catch (e) {
    throw new HwError('diagnose_input_invalid', `no valid manifest in ${quotePath(planPath)}`, {
      help: `the harness analyst runs on the run's own manifest and model route (${String((e as Error).message).split('\n')[0]})`,
    })
  }
  const cmp = await readFile(path.join(roundDir, 'comparison.json'), 'utf8').catch(() => '{}')
  const runId = (JSON.parse(cmp) as { run_id?: unknown }).run_id
  const analyst = harnessAnalyst({
    ...opts,
    manifest,
    diagnosisDir: path.join(roundDir, 'diagnosis'),
    runId: typeof runId === 'string' ? runId : 'diagnose',
  })
  if (!analyst) {
    throw new HwError('diagnose_input_invalid', 'no cell of the run can serve as the analyst', {
      help: `the analyst runs read-only in one of: ${Object.keys(READ_ONLY_ARGS).join(', ')} (cells: ${manifest.cells.map((c) => `${c.id}=${c.harness}`).join(', ')}); use --analyst scripted`,
    })
  }
  return analyst
}

/** The proxy's port and the tool-bridge's (a 127.0.0.1 URL) under an isolating backend; else the host's network. */
function analystPorts(origin: string, bridgeUrl: string, backend: Isolation): number[] | undefined {
  const proxy = harnessPorts(origin, backend)
  return proxy && [...proxy, ...loopbackPorts(bridgeUrl)]
}
