import { RESUME_RECIPES } from '../harnesses/resume.js'
import type { HarnessName } from '../manifest/harness-names.js'
import type { AttemptRecord } from '../records/attempt.js'
import type { Attribution } from '../records/ledger.js'
import type { AttemptTelemetry, CapturedTelemetry, TelemetryCapture } from '../telemetry/capture.js'
import type { DialogueAttempt, DialogueSummary, HarnessOnce } from './dialogue.js'

/** What the dialogue glue needs of the leg (a slice of LegContext). */
export interface DialogueLeg {
  cell: { harness: string }
  capture: TelemetryCapture | null
  timeoutS: number
  /** The manifest's user_model: its id and the dialogue's turn limit; null when none is declared. */
  userModel: { id: string; maxTurns: number } | null
}

/**
 * Register the simulated user's own key at the proxy: the attempt's attribution with role
 * `user_simulation`, no budget of the harness's. Null without a capture; a failing capture is null too
 * (the user's first reply then fails the dialogue with a reason).
 */
export async function beginUserSimulation(
  leg: DialogueLeg,
  attribution: Attribution,
): Promise<AttemptTelemetry | null> {
  if (!leg.capture) return null
  return leg.capture.begin({ ...attribution, role: 'user_simulation' }, {}).catch(() => null)
}

/** The user simulation's telemetry once the dialogue is over (never throws; null when none). */
export async function finishUserSimulation(tel: AttemptTelemetry | null): Promise<CapturedTelemetry | null> {
  return tel ? tel.finish().catch(() => null) : null
}

/** The dialogue's settings for one attempt. Throws when the manifest has no user_model or the harness no resume. */
export function dialogueSpec(
  leg: DialogueLeg,
  task: { opening: string; scenario: string; logs: string; stdoutFile: string; stderrFile: string },
  userTel: AttemptTelemetry | null,
  once: HarnessOnce,
  parse: DialogueAttempt['parse'],
  signal?: AbortSignal,
): DialogueAttempt {
  if (!leg.userModel)
    throw new Error('this task talks with a simulated user, but the manifest has no user_model')
  const recipe = RESUME_RECIPES[leg.cell.harness as HarnessName] ?? null
  if (!recipe) throw new Error(`${leg.cell.harness} has no headless session resume for a multi-turn task`)
  return {
    opening: task.opening,
    scenario: task.scenario,
    maxTurns: leg.userModel.maxTurns,
    recipe,
    user: userTel ? { model: leg.userModel.id, endpoint: userTel.endpoint } : null,
    timeoutMs: leg.timeoutS * 1000,
    logsDir: task.logs,
    stdoutFile: task.stdoutFile,
    stderrFile: task.stderrFile,
    once,
    parse,
    signal,
  }
}

/** The attempt record's `dialogue`: turns, how it ended, and the simulated user's own spend (apart). */
export function dialogueRecord(
  d: DialogueSummary,
  user: CapturedTelemetry | null,
): NonNullable<AttemptRecord['dialogue']> {
  const s = user?.summary
  return {
    turns: d.turns,
    ended: d.ended,
    resumed_session: d.turns > 1 && d.session !== null,
    user_simulation: {
      requests: s ? s.rows : null,
      input_tokens: s?.input_tokens ?? null,
      output_tokens: s?.output_tokens ?? null,
      spend_usd: s?.spend_usd ?? null,
      coverage: s?.coverage ?? 'unknown',
    },
  }
}
