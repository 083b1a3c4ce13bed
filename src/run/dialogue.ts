import { randomUUID } from 'node:crypto'
import { appendFile, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { type DialogueEnd, runDialogue } from '../dialogue/loop.js'
import { userSimulationBody } from '../dialogue/user-request.js'
import type { Invocation, ParsedRun } from '../harnesses/contract.js'
import { withLeadingFlags } from '../harnesses/mcp.js'
import type { ResumeRecipe } from '../harnesses/resume.js'
import type { HarnessRunResult } from '../process/exec.js'
import type { AttemptEndpoint } from '../telemetry/capture.js'

/** Runs the harness once: the invocation is prepared for `prompt`, then `adjust`ed (session flags). */
export type HarnessOnce = (turn: {
  prompt: string
  adjust: (inv: Invocation) => Invocation
  stdoutFile: string
  stderrFile: string
  timeoutMs: number
}) => Promise<HarnessRunResult>

export interface DialogueAttempt {
  /** The task instruction: turn 1's message. */
  opening: string
  scenario: string
  maxTurns: number
  recipe: ResumeRecipe
  /** The user model's id and the proxy endpoint of its own (user_simulation) key; null = none. */
  user: { model: string; endpoint: AttemptEndpoint } | null
  /** The whole attempt's time budget (every turn shares it), ms. */
  timeoutMs: number
  logsDir: string
  /** The attempt's stdout.txt and stderr.txt: every turn's output, in order. */
  stdoutFile: string
  stderrFile: string
  once: HarnessOnce
  parse: (stdout: string, stderr: string, run: HarnessRunResult) => Promise<ParsedRun>
  signal?: AbortSignal
}

/** How the dialogue went, for the attempt record (`dialogue`). */
export interface DialogueSummary {
  turns: number
  ended: DialogueEnd | 'user_failed'
  /** The harness's session id every turn after the first resumed, or null when none was found. */
  session: string | null
  /** Why the simulated user could not answer, or null. */
  error: string | null
}

/**
 * Drive one multi-turn bridge attempt (the run stage's glue around dialogue/loop.ts): turn 1 sends the
 * instruction (with the harness's own session flag when it accepts our id), every later turn resumes
 * that session with the harness's documented flag (resume table); the bridge's state folder is the
 * same for every turn, so the world persists. Each turn's output goes to `turn-<n>.stdout.txt` /
 * `.stderr.txt` and is appended to the attempt's stdout.txt / stderr.txt (the adapter parses the
 * whole). The simulated user answers through the proxy with its own key. Returns the turns' combined
 * process result (durations summed, the last turn's exit) and the dialogue's summary; the transcript
 * is written to `dialogue.json`. A user model that fails ends the dialogue (`user_failed`) after the
 * turns already run; grading is the caller's, once, at the end.
 */
export async function runDialogueAttempt(
  d: DialogueAttempt,
): Promise<{ run: HarnessRunResult | null; summary: DialogueSummary }> {
  await writeFile(d.stdoutFile, '')
  await writeFile(d.stderrFile, '')
  const runs: HarnessRunResult[] = []
  const ours = randomUUID()
  const startFlags = d.recipe.start(ours)
  let session: string | null = startFlags ? ours : null
  let userError: string | null = null
  const deadline = performance.now() + d.timeoutMs
  let result: Awaited<ReturnType<typeof runDialogue>> | null = null
  try {
    result = await runDialogue(
      d.opening,
      {
        async turn(message, index) {
          const base = path.join(d.logsDir, `turn-${index + 1}`)
          const run = await d.once({
            prompt: message,
            adjust: (inv) =>
              index === 0
                ? startFlags
                  ? withLeadingFlags(inv, startFlags)
                  : inv
                : session
                  ? d.recipe.resume(inv, session)
                  : inv,
            stdoutFile: `${base}.stdout.txt`,
            stderrFile: `${base}.stderr.txt`,
            timeoutMs: Math.max(1, Math.round(deadline - performance.now())),
          })
          runs.push(run)
          const stdout = await readFile(`${base}.stdout.txt`, 'utf8').catch(() => '')
          const stderr = await readFile(`${base}.stderr.txt`, 'utf8').catch(() => '')
          await appendFile(d.stdoutFile, stdout)
          await appendFile(d.stderrFile, stderr)
          const parsed = await d.parse(stdout, stderr, run)
          if (index === 0 && !session) session = d.recipe.sessionOf(parsed.trajectory)
          const ok =
            run.exitCode === 0 && !run.timedOut && !run.aborted && !run.spawnError && session !== null
          return { answer: parsed.finalMessage, ok }
        },
        async reply(history) {
          try {
            return await askUser(d, history)
          } catch (e) {
            userError = (e as Error).message.split('\n')[0]?.slice(0, 300) ?? 'failed'
            throw e
          }
        },
      },
      { maxTurns: d.maxTurns, signal: d.signal },
    )
  } catch (e) {
    if (userError === null) throw e
  }
  const summary: DialogueSummary = {
    turns: result?.turns ?? runs.length,
    ended: result?.ended ?? 'user_failed',
    session,
    error: userError,
  }
  await writeFile(
    path.join(d.logsDir, 'dialogue.json'),
    `${JSON.stringify({ ...summary, history: result?.history ?? null }, null, 2)}\n`,
  )
  return { run: combine(runs), summary }
}

/** One Chat Completions request of the simulated user through the proxy; its text, or a thrown error. */
async function askUser(
  d: DialogueAttempt,
  history: Parameters<typeof userSimulationBody>[2],
): Promise<string> {
  if (!d.user) throw new Error('the simulated user has no model endpoint (no telemetry capture)')
  const res = await fetch(`${d.user.endpoint.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${d.user.endpoint.apiKey}` },
    body: JSON.stringify(userSimulationBody(d.user.model, d.scenario, history)),
    signal: d.signal,
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`the user model answered HTTP ${res.status}`)
  const content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]
    ?.message?.content
  if (typeof content !== 'string') throw new Error('the user model gave no text answer')
  return content
}

/** The turns as one process result: durations and strays summed, the last turn's exit, any timeout/abort. */
function combine(runs: readonly HarnessRunResult[]): HarnessRunResult | null {
  const last = runs.at(-1)
  if (!last) return null
  return {
    ...last,
    timedOut: runs.some((r) => r.timedOut),
    aborted: runs.some((r) => r.aborted),
    durationMs: runs.reduce((s, r) => s + r.durationMs, 0),
    strays: runs.reduce((s, r) => s + r.strays, 0),
  }
}
