import path from 'node:path'
import { parse } from 'yaml'

/** A workflow file's path (relative to the repository root) and text. */
export interface WorkflowFile {
  file: string
  text: string
}

/**
 * The workflows among `workflows` that run on a schedule (`on: schedule`) and name the manifest —
 * its path relative to the repository root appears in the file (as a `manifest:` input or in a
 * command). Pure; a file that is not valid YAML is skipped (the workflow's own linting says why).
 */
export function scheduledWorkflowsUsing(workflows: WorkflowFile[], manifestRel: string): string[] {
  const rel = manifestRel.split(path.sep).join('/')
  const names = new Set([rel, `./${rel}`])
  const out: string[] = []
  for (const w of workflows) {
    let doc: unknown
    try {
      doc = parse(w.text)
    } catch {
      continue
    }
    if (!isScheduled(doc)) continue
    // Whole-path tokens only: "manifests/a.yml" must not match "manifests/a.yml.bak" or "x/manifests/a.yml".
    const tokens = w.text.split(/[\s'"`=,:[\]{}()]+/)
    if (tokens.some((t) => names.has(t))) out.push(w.file)
  }
  return out.sort()
}

function isScheduled(doc: unknown): boolean {
  if (!doc || typeof doc !== 'object') return false
  const on = (doc as Record<string, unknown>).on ?? (doc as Record<string, unknown>).true
  if (on === 'schedule') return true
  if (Array.isArray(on)) return on.includes('schedule')
  return !!on && typeof on === 'object' && 'schedule' in on
}
