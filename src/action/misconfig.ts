import { readFileSync } from 'node:fs'
import { HwError } from '../util/errors.js'

/**
 * Workflow misconfigurations (a missing permission, a missing secret, a fork without secrets, an
 * empty token) turned into ONE line that names what is missing and the workflow file to change.
 * The runner's environment is the source: GITHUB_WORKFLOW_REF names the top-level (calling) workflow
 * file even inside a reusable workflow; GITHUB_EVENT_PATH holds the event payload. Pure apart from
 * reading that payload file.
 */

/** Environment variables the reusable workflow fills from its secrets (harness-watch.yml). */
export const SECRET_OF_ENV: Record<string, string> = {
  PROVIDER_API_KEY: 'provider-api-key',
  PROVIDER_BASE_URL: 'provider-base-url',
  LITELLM_BASE_URL: 'litellm-base-url',
  LITELLM_MASTER_KEY: 'litellm-master-key',
}

/** The parts of a manifest that name environment variables (plain object: a parsed manifest file). */
export interface ManifestEnvNames {
  model?: { api_key_env?: string; base_url_env?: string }
  models?: Record<string, { api_key_env?: string; base_url_env?: string }>
  telemetry?: { source?: string; litellm?: { base_url_env?: string; master_key_env?: string } }
  cells?: { config?: { pass_env?: string[] } }[]
}

/** The environment variables a manifest reads from the runner (model route, LiteLLM ledger, pass_env). */
export function envReadByManifest(m: ManifestEnvNames): Set<string> {
  const out = new Set<string>()
  if (m.model?.api_key_env) out.add(m.model.api_key_env)
  if (m.model?.base_url_env) out.add(m.model.base_url_env)
  for (const r of Object.values(m.models ?? {})) {
    if (r?.api_key_env) out.add(r.api_key_env)
    if (r?.base_url_env) out.add(r.base_url_env)
  }
  if (m.telemetry?.source === 'litellm') {
    out.add(m.telemetry.litellm?.base_url_env ?? 'LITELLM_BASE_URL')
    out.add(m.telemetry.litellm?.master_key_env ?? 'LITELLM_MASTER_KEY')
  }
  for (const c of m.cells ?? []) for (const e of c.config?.pass_env ?? []) out.add(e)
  return out
}

/**
 * Secrets of the reusable workflow that do not line up with the manifest, one line each: a variable
 * the manifest reads that the call does not pass (its secret named), and a secret passed that the
 * manifest never reads (a key handed to the legs for nothing). `passed` holds the secret names the
 * calling job gives (`provider-api-key`, …); `where` names the calling job and file.
 */
export function secretMismatches(reads: Set<string>, passed: Iterable<string>, where: string): string[] {
  const given = new Set(passed)
  const lines: string[] = []
  for (const [env, secret] of Object.entries(SECRET_OF_ENV)) {
    if (reads.has(env) && !given.has(secret)) {
      lines.push(
        `missing secret: the manifest reads ${env}; pass the secret "${secret}" under secrets: of ${where}`,
      )
    } else if (!reads.has(env) && given.has(secret)) {
      lines.push(
        `unused secret: "${secret}" is passed by ${where} but the manifest never reads ${env}; remove it, or name ${env} in the manifest`,
      )
    }
  }
  return lines
}

/**
 * The calling workflow's file, e.g. `.github/workflows/weekly.yml`, from GITHUB_WORKFLOW_REF
 * (`owner/repo/.github/workflows/weekly.yml@refs/heads/main`); "the calling workflow" when unknown.
 */
export function callerFile(env: NodeJS.ProcessEnv = process.env): string {
  const ref = env.GITHUB_WORKFLOW_REF ?? ''
  const m = /^[^/]+\/[^/]+\/(.+?)@/.exec(ref)
  return m?.[1] ?? 'the calling workflow'
}

/** True when this run was triggered by a pull request whose head is in a fork (read-only token, no secrets). */
export function isForkPullRequest(env: NodeJS.ProcessEnv = process.env): boolean {
  if (!env.GITHUB_EVENT_NAME?.startsWith('pull_request') || !env.GITHUB_EVENT_PATH) return false
  try {
    const event = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8')) as {
      pull_request?: { head?: { repo?: { fork?: boolean } | null } }
    }
    return event.pull_request?.head?.repo?.fork === true
  } catch {
    return false
  }
}

/** Job-summary paragraph for a pull request from a fork: why its run is inconclusive and not published. */
export const FORK_SUMMARY =
  '> [!NOTE]\n' +
  '> **Pull request from a fork.** GitHub gives workflow runs of fork pull requests no secrets and a ' +
  'read-only token, so the legs cannot reach the model route (its API key is empty) and nothing can be ' +
  'written to the pull request. The result is **inconclusive**: it says nothing about the change. A ' +
  'maintainer can run the check from a branch of this repository; the `workflow_run` companion ' +
  '(examples/pr-check-comment.yml) posts results that did run.'

/**
 * One line for a misconfiguration error, or null when `e` is not one (the caller prints it as usual).
 *  - a variable named by the manifest is not set (`model_route_invalid` "X is not set"): the secret to
 *    pass in the calling job, or, on a fork pull request, why there is none;
 *  - GitHub answered 403 for a missing permission (`github_permission`): the permission to grant;
 *  - no token (`github_token_missing`): the token input to set.
 */
export function misconfigurationLine(e: unknown, env: NodeJS.ProcessEnv = process.env): string | null {
  if (!(e instanceof HwError)) return null
  const caller = callerFile(env)
  const fork = isForkPullRequest(env)
  if (e.code === 'model_route_invalid') {
    const m = /^([A-Za-z_][A-Za-z0-9_]*) is not set/.exec(e.message)
    if (!m) return null
    const name = m[1] as string
    if (fork) {
      return `fork pull request: ${name} is empty because GitHub passes no secrets to runs of pull requests from forks; this run is inconclusive (nothing is wrong in ${caller})`
    }
    const secret = SECRET_OF_ENV[name]
    return secret
      ? `missing secret: ${name} is empty; pass the secret "${secret}" under secrets: of the job that calls harness-watch.yml in ${caller}`
      : `missing secret: ${name} is empty; set it in the env: of the Harness Watch step in ${caller} (the manifest names it)`
  }
  if (e.code === 'github_permission') {
    const m = /`permissions: ([a-z-]+: (?:read|write))`/.exec(e.message)
    const permission = m?.[1] ?? 'the write permission'
    if (fork) {
      return `fork pull request: the token is read-only whatever permissions: says, so "${permission}" cannot be used; examples/pr-check-comment.yml posts the comment from the base repository`
    }
    const job = env.GITHUB_JOB ? `job "${env.GITHUB_JOB}" needs "${permission}": ` : ''
    return `missing permission: ${job}grant "${permission}" under permissions: of the job that calls harness-watch.yml in ${caller}`
  }
  if (e.code === 'github_token_missing') {
    return `the token input is empty: pass token: \${{ github.token }} (or a token with issues/pull-requests write) to the publish step, or set dry-run: true; change ${caller}`
  }
  return null
}
