/**
 * Re-uploaded leg artifacts. A leg's artifact is uploaded as `<artifact>-a<N>`, N the workflow's run
 * attempt (GITHUB_RUN_ATTEMPT): a re-run of failed jobs uploads a new name, never over the old one.
 * The aggregate reads, per leg, the highest attempt not above its own; a plain `<artifact>` (a local
 * run, or an upload of an earlier version) counts as attempt 0.
 */

/** One upload of a leg found in the download folder. */
export interface UploadCandidate {
  name: string
  /** The run attempt its name states (0 for the plain name). */
  attempt: number
}

/** A re-upload read in place of earlier uploads of the same leg (an evaluation-health warning). */
export interface Reupload {
  leg: string
  read: string
  run_attempt: number
  replaces: string[]
}

/** Uploads of `artifact` among the folder's `entries`, highest attempt first. */
export function uploadCandidates(entries: readonly string[], artifact: string): UploadCandidate[] {
  const out: UploadCandidate[] = []
  const prefix = `${artifact}-a`
  for (const e of entries) {
    if (e === artifact) out.push({ name: e, attempt: 0 })
    else if (e.startsWith(prefix) && /^[1-9]\d{0,3}$/.test(e.slice(prefix.length)))
      out.push({ name: e, attempt: Number(e.slice(prefix.length)) })
  }
  return out.sort((a, b) => b.attempt - a.attempt)
}

/** The run attempt a leg.json's `run_id` states (`<run id>-<attempt>` on Actions), or null. */
export function runAttemptOf(runId: string): number | null {
  const m = /^\d+-(\d{1,4})$/.exec(runId)
  return m ? Number(m[1]) : null
}

/** The workflow run a run id states (`<run id>-<attempt>` on Actions), or null. */
export function workflowRunOf(runId: string): string | null {
  const m = /^(\d+)-\d{1,4}$/.exec(runId)
  return m ? (m[1] as string) : null
}

/** The current workflow run from GITHUB_RUN_ID, or null outside Actions (not checked). */
export function currentWorkflowRun(env: NodeJS.ProcessEnv): string | null {
  const v = env.GITHUB_RUN_ID
  return v !== undefined && /^\d+$/.test(v) ? v : null
}

/** The current run attempt from GITHUB_RUN_ATTEMPT, or null outside Actions (no upper bound). */
export function currentRunAttempt(env: NodeJS.ProcessEnv): number | null {
  const v = env.GITHUB_RUN_ATTEMPT
  return v !== undefined && /^[1-9]\d{0,3}$/.test(v) ? Number(v) : null
}
