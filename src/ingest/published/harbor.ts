import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { sha256 } from '../../util/json.js'
import { zodMessage } from '../jsonl.js'
import type { PublishedInstance, PublishedSystem, PublishedTrial } from './formats.js'

/**
 * A Harbor job folder: `<job>/config.json`, `<job>/result.json` (the job's summary) and one folder per
 * trial holding `result.json` (Harbor's TrialResult). Read per trial: `task_name`, `agent_info{name,
 * version, model_info{name, provider}}`, `verifier_result.rewards` (the `reward` entry, or the only
 * one), `exception_info` (set when the trial raised: an evaluation failure, never a loss) and
 * `agent_result` (`n_input_tokens` including cached, `n_cache_tokens`, `n_output_tokens`, `cost_usd`:
 * parsed by Harbor from the harness's own output, so self-reported). One system per agent and model.
 */

const TrialResult = z.looseObject({
  task_name: z.string().min(1),
  started_at: z.string().nullish(),
  trial_name: z.string().nullish(),
  agent_info: z
    .looseObject({
      name: z.string().min(1),
      version: z.string().nullish(),
      model_info: z.looseObject({ name: z.string().nullish(), provider: z.string().nullish() }).nullish(),
    })
    .nullish(),
  verifier_result: z
    .looseObject({ rewards: z.record(z.string(), z.number().nullable()).nullish() })
    .nullish(),
  exception_info: z
    .looseObject({
      exception_type: z.string().nullish(),
      exception_message: z.string().nullish(),
    })
    .nullish(),
  agent_result: z
    .looseObject({
      n_input_tokens: z.number().nonnegative().nullish(),
      n_cache_tokens: z.number().nonnegative().nullish(),
      n_output_tokens: z.number().nonnegative().nullish(),
      cost_usd: z.number().nonnegative().nullish(),
    })
    .nullish(),
})
export type HarborTrialResult = z.output<typeof TrialResult>

/** One trial as read. */
export interface HarborTrial {
  folder: string
  task: string
  agent: string
  agentVersion: string | null
  model: string | null
  outcome: PublishedTrial
  costUsd: number | null
  tokens: { input: number | null; cached: number | null; output: number | null }
  exception: string | null
  /** `started_at` as Harbor wrote it (naive ISO 8601, UTC); null when absent. */
  startedAt: string | null
}

/** A trial folder whose result could not be used, with why (listed, never dropped silently). */
export interface HarborProblem {
  folder: string
  problem: string
}

export interface HarborJob {
  dir: string
  trials: HarborTrial[]
  problems: HarborProblem[]
  /** sha256 over the trial result files read, in folder order. */
  sha256: string
}

/** True when `dir` looks like a Harbor job: a folder whose sub-folders hold result.json or config.json. */
export async function isHarborJob(dir: string): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => null)
  if (!entries) return false
  for (const e of entries.filter((x) => x.isDirectory())) {
    const inner = await readdir(path.join(dir, e.name)).catch(() => [] as string[])
    if (inner.includes('result.json') || inner.includes('config.json')) return true
  }
  return false
}

/** The reward of a verifier result: `reward`, else the only entry; null when none. */
function rewardOf(rewards: Record<string, number | null> | null | undefined): number | null {
  if (!rewards) return null
  if (Object.hasOwn(rewards, 'reward')) return rewards.reward ?? null
  const vals = Object.values(rewards)
  return vals.length === 1 ? (vals[0] ?? null) : null
}

/** Reduce one parsed TrialResult. */
export function trialOf(v: HarborTrialResult, folder: string): HarborTrial {
  const reward = rewardOf(v.verifier_result?.rewards)
  const exception = v.exception_info
    ? `${v.exception_info.exception_type ?? 'exception'}${v.exception_info.exception_message ? `: ${v.exception_info.exception_message}` : ''}`
    : null
  const outcome: PublishedTrial =
    exception !== null
      ? 'infra_error'
      : reward === null
        ? 'ungraded'
        : reward >= 1
          ? 'resolved'
          : 'unresolved'
  return {
    folder,
    task: v.task_name,
    agent: v.agent_info?.name ?? 'unknown-agent',
    agentVersion: v.agent_info?.version ?? null,
    model: v.agent_info?.model_info?.name ?? null,
    outcome,
    costUsd: v.agent_result?.cost_usd ?? null,
    tokens: {
      input: v.agent_result?.n_input_tokens ?? null,
      cached: v.agent_result?.n_cache_tokens ?? null,
      output: v.agent_result?.n_output_tokens ?? null,
    },
    exception,
    startedAt: v.started_at ?? null,
  }
}

/**
 * Read every trial folder of a job. A folder without result.json, a truncated or invalid one, is a
 * problem entry naming the folder (and the field); the other trials are still read.
 */
export async function readHarborJob(dir: string): Promise<HarborJob> {
  const entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory())
  entries.sort((a, b) => a.name.localeCompare(b.name))
  const trials: HarborTrial[] = []
  const problems: HarborProblem[] = []
  const texts: string[] = []
  for (const e of entries) {
    const folder = e.name
    const file = path.join(dir, folder, 'result.json')
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) =>
      err.code === 'ENOENT' ? null : `\0${err.code ?? err.message}`,
    )
    if (text === null) {
      problems.push({
        folder,
        problem: 'no result.json (the trial did not finish, or its result was not written)',
      })
      continue
    }
    if (text.startsWith('\0')) {
      problems.push({ folder, problem: `result.json unreadable: ${text.slice(1)}` })
      continue
    }
    texts.push(`${folder}\n${text}`)
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (err) {
      problems.push({
        folder,
        problem: `result.json is not valid JSON (truncated?): ${(err as Error).message}`,
      })
      continue
    }
    const r = TrialResult.safeParse(json)
    if (!r.success) {
      problems.push({ folder, problem: `result.json: ${zodMessage(r.error)}` })
      continue
    }
    trials.push(trialOf(r.data, folder))
  }
  return { dir, trials, problems, sha256: sha256(texts.join('\n')) }
}

/** `agent` or `agent__model`: how a job's systems are named and selected. */
export function systemKey(t: Pick<HarborTrial, 'agent' | 'model'>): string {
  return t.model ? `${t.agent}__${t.model}` : t.agent
}

/** The systems (agent and model pairs) of a job, by key. */
export function harborSystems(job: HarborJob): string[] {
  return [...new Set(job.trials.map(systemKey))].sort()
}

/**
 * One system of a job as a published system: each task's trials in folder order; the cost the harness
 * reported summed per task (null when any trial of the task lacks one). Evaluation failures are
 * `infra_error` trials; the notes list them and every problem trial folder.
 */
export function fromHarborJob(job: HarborJob, key: string, source: string): PublishedSystem {
  const mine = job.trials.filter((t) => systemKey(t) === key)
  const instances = new Map<string, PublishedInstance>()
  const costs = new Map<string, (number | null)[]>()
  for (const t of mine) {
    const x = instances.get(t.task) ?? { trials: [], costUsd: null, requests: null }
    x.trials.push(t.outcome)
    instances.set(t.task, x)
    costs.set(t.task, [...(costs.get(t.task) ?? []), t.costUsd])
  }
  for (const [task, cs] of costs) {
    const x = instances.get(task) as PublishedInstance
    x.costUsd = cs.some((c) => c === null) ? null : cs.reduce((s: number, c) => s + (c as number), 0)
  }
  const first = mine[0]
  const notes: string[] = []
  const errors = mine.filter((t) => t.outcome === 'infra_error')
  if (errors.length > 0) {
    notes.push(
      `${key}: ${errors.length} trial(s) raised an exception (evaluation failures, left out of the pairing): ${errors
        .map((t) => `${t.folder} (${t.exception})`)
        .join('; ')}`,
    )
  }
  const ungraded = mine.filter((t) => t.outcome === 'ungraded').length
  if (ungraded > 0) notes.push(`${key}: ${ungraded} trial(s) have no verifier reward`)
  for (const p of job.problems)
    notes.push(`${path.basename(job.dir)}/${p.folder}: ${p.problem} (not compared)`)
  if (mine.some((t) => t.costUsd !== null))
    notes.push(
      `${key}: cost is self-reported by the harness (Harbor's agent_result.cost_usd), not proxy-measured`,
    )
  const counts = [...instances.values()].map((x) => x.trials.length)
  if (new Set(counts).size > 1)
    notes.push(`${key}: tasks have between ${Math.min(...counts)} and ${Math.max(...counts)} trials`)
  return {
    name: key,
    format: 'harbor-job',
    source,
    harness: first?.agent ?? key,
    harnessVersion: first?.agentVersion ?? null,
    model: first?.model ?? null,
    benchmark: null,
    date: null,
    instances,
    declaredTotal: null,
    absentIsUnresolved: false,
    costSource: 'harness-self-reported',
    notes,
  }
}
