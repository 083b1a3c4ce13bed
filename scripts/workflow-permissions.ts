// GitHub's load-time check of a reusable workflow call: when a caller job loads a called workflow,
// every job in it must ask for no more GITHUB_TOKEN permission than the caller job grants — checked
// for every nested job, whatever its `if:` says, before anything runs. Otherwise the run fails at
// start-up with (GitHub's own text):
//   The nested job 'publish-issue' is requesting 'issues: write', but is only allowed 'issues: none'.
// Sources: docs "Reusing workflow configurations" › "Access and permissions" ("permissions can only be
// maintained or reduced"); "Workflow syntax" › permissions (naming any scope sets the others to none;
// read-all / write-all / {}); "Controlling permissions for GITHUB_TOKEN" (default: the repository
// setting, `contents: read` + `packages: read` when restricted — the default for new repositories).
// Pure: it works on plain objects read from the workflow files.

export type Access = 'none' | 'read' | 'write'
export type Grant = Record<string, Access>

/** The GITHUB_TOKEN scopes `permissions:` may name (workflow syntax reference). */
export const SCOPES = [
  'actions',
  'attestations',
  'checks',
  'contents',
  'deployments',
  'discussions',
  'id-token',
  'issues',
  'models',
  'packages',
  'pages',
  'pull-requests',
  'repository-projects',
  'security-events',
  'statuses',
] as const

const RANK: Record<Access, number> = { none: 0, read: 1, write: 2 }

/** The token a job gets when neither it nor its workflow names `permissions:` (restricted default). */
export const RESTRICTED_DEFAULT: Grant = full('none', { contents: 'read', packages: 'read' })

function full(level: Access, overrides: Grant = {}): Grant {
  return { ...Object.fromEntries(SCOPES.map((s) => [s, level])), ...overrides }
}

/**
 * A `permissions:` value as a full grant: `read-all`, `write-all`, `{}` (all none) or a mapping
 * (unnamed scopes none). Null when the value is absent (inherit). Throws on an unknown level.
 */
export function toGrant(value: unknown): Grant | null {
  if (value === undefined || value === null) return null
  if (value === 'read-all') return full('read')
  if (value === 'write-all') return full('write')
  if (typeof value === 'object' && !Array.isArray(value)) {
    const g = full('none')
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v !== 'none' && v !== 'read' && v !== 'write') throw new Error(`permissions: ${k}: ${String(v)}`)
      g[k] = v
    }
    return g
  }
  throw new Error(`permissions: ${JSON.stringify(value)} is not read-all, write-all or a mapping`)
}

export interface CalledWorkflow {
  /** The `uses:` reference, for the message. */
  ref: string
  /** The called workflow's top-level `permissions:` (undefined when absent). */
  permissions: unknown
  /** Its jobs with their `permissions:` (undefined when absent). */
  jobs: { id: string; permissions: unknown }[]
}

/**
 * Errors GitHub reports when `callerJob` (whose `permissions:` is `jobPermissions`, in a workflow whose
 * top-level `permissions:` is `workflowPermissions`) calls `called`. Empty when the call starts.
 * A nested job asks for its own `permissions:`, else the called workflow's, else inherits the grant.
 */
export function nestedPermissionErrors(
  callerJob: string,
  jobPermissions: unknown,
  workflowPermissions: unknown,
  called: CalledWorkflow,
): string[] {
  const grant = toGrant(jobPermissions) ?? toGrant(workflowPermissions) ?? RESTRICTED_DEFAULT
  const errors: string[] = []
  const calleeDefault = toGrant(called.permissions)
  for (const job of called.jobs) {
    const asks = toGrant(job.permissions) ?? calleeDefault
    if (!asks) continue
    for (const [scope, level] of Object.entries(asks)) {
      const allowed = grant[scope] ?? 'none'
      if (RANK[level] > RANK[allowed]) {
        errors.push(
          `${callerJob}: Error calling workflow '${called.ref}'. The nested job '${job.id}' is requesting '${scope}: ${level}', but is only allowed '${scope}: ${allowed}'.`,
        )
      }
    }
  }
  return errors
}

/** A nested job that names no permissions (it gets the caller's grant) but needs one to do its work. */
export interface InheritingJob {
  id: string
  /** The permission it needs, e.g. `issues: write` (the job's HW_PUBLISH_PERMISSION). */
  needs: string
  /** Whether its `if:` can be true for this call (evaluated with the caller's inputs). */
  runs: boolean
}

/**
 * What GitHub's load-time check cannot see: a nested job without `permissions:` starts with whatever
 * the caller grants, and fails at its first write if that lacks what it needs. One line per such job
 * that would run for this call, naming the job, the permission and the calling job and file.
 */
export function inheritedPermissionErrors(
  callerJob: string,
  callerFile: string,
  jobPermissions: unknown,
  workflowPermissions: unknown,
  ref: string,
  jobs: InheritingJob[],
): string[] {
  const grant = toGrant(jobPermissions) ?? toGrant(workflowPermissions) ?? RESTRICTED_DEFAULT
  const errors: string[] = []
  for (const job of jobs) {
    if (!job.runs) continue
    const m = /^([a-z-]+):\s*(read|write)$/.exec(job.needs.trim())
    if (!m) throw new Error(`${job.id}: HW_PUBLISH_PERMISSION "${job.needs}" is not "<scope>: read|write"`)
    const [, scope, level] = m as unknown as [string, string, Access]
    const allowed = grant[scope] ?? 'none'
    if (RANK[level] > RANK[allowed]) {
      errors.push(
        `${callerJob}: the nested job '${job.id}' of '${ref}' needs '${scope}: ${level}' and gets '${scope}: ${allowed}' from this call: grant '${scope}: ${level}' under permissions: of job '${callerJob}' in ${callerFile}.`,
      )
    }
  }
  return errors
}
