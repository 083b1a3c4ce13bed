// The bundled action as a checkout of this repository: action.yml, scripts/ and .github/ copied,
// dist/ linked to the bundle under test (the committed dist/, or HW_DIST_DIR for a fresh build).
import { cpSync, existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'

export const root = path.resolve(import.meta.dirname, '..', '..')
export const dist = process.env.HW_DIST_DIR ? path.resolve(process.env.HW_DIST_DIR) : path.join(root, 'dist')
const bundle = path.join(dist, 'index.js')
// A bundle built before the detection and publish steps existed cannot run the pack (check-dist
// catches a stale dist/ in CI); say so instead of failing on it.
const stale = existsSync(bundle) && !readFileSync(bundle, 'utf8').includes('confirm-plan-path')
export const built = existsSync(bundle) && !stale
if (!built) {
  const why = stale ? `${bundle} predates the detect/publish steps` : `no bundle at ${dist}`
  console.warn(`skipping bundle tests: ${why} (run npm run build, or set HW_DIST_DIR)`)
}

export function actionCheckout(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-action-'))
  cpSync(path.join(root, 'action.yml'), path.join(dir, 'action.yml'))
  cpSync(path.join(root, '.github'), path.join(dir, '.github'), { recursive: true })
  cpSync(path.join(root, 'scripts'), path.join(dir, 'scripts'), { recursive: true })
  symlinkSync(dist, path.join(dir, 'dist'))
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'))
  return dir
}

export interface ActionRun {
  exitCode: number
  outputs: Record<string, string>
  summary: string
  annotations: { kind: string; message: string }[]
}

/** Run the bundle with scripts/run-action.mjs (INPUT_* with hyphens kept, file commands parsed). */
export async function runAction(
  action: string,
  workspace: string,
  inputs: Record<string, string>,
  env: Record<string, string> = {},
): Promise<ActionRun> {
  return startAction(action, workspace, inputs, env).result
}

/**
 * Start the bundle with scripts/run-action.mjs without waiting: `runner` is the runner's process (a
 * SIGINT/SIGTERM to it cancels the step as GitHub cancels a job), `result` the step once it ended.
 */
export function startAction(
  action: string,
  workspace: string,
  inputs: Record<string, string>,
  env: Record<string, string> = {},
): { runner: ReturnType<typeof execa>; result: Promise<ActionRun> } {
  const envFile = path.join(mkdtempSync(path.join(tmpdir(), 'hw-action-env-')), '.env')
  writeFileSync(
    envFile,
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
  )
  const runner = execa(
    process.execPath,
    [
      path.join(action, 'scripts', 'run-action.mjs'),
      '--action',
      action,
      '--workspace',
      workspace,
      '--env',
      envFile,
      '--json',
      ...Object.entries(inputs).map(([k, v]) => `${k}=${v}`),
    ],
    { reject: false },
  )
  const result = runner.then((r) => {
    const last = String(r.stdout).trim().split('\n').at(-1) ?? ''
    if (!last.startsWith('{')) throw new Error(`run-action failed:\n${r.stderr}`)
    return JSON.parse(last) as ActionRun
  })
  return { runner, result }
}

/**
 * scripts/simulate-workflow.ts as a process group of its own, bound to the test that started it:
 * when the test times out or is cancelled (`signal`, vitest's test context), the whole simulation —
 * its jobs' actions and harnesses — is killed. A simulation is minutes of work whose length follows
 * the machine's load; one that outlived its test used to go on publishing into the fake GitHub the
 * next tests of the file share, so one slow run failed three tests.
 */
export async function simulateWorkflow(args: string[], signal?: AbortSignal) {
  const child = execa(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'scripts', 'simulate-workflow.ts'), ...args],
    { cwd: root, reject: false, detached: true },
  )
  const kill = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  if (signal?.aborted) kill()
  signal?.addEventListener('abort', kill, { once: true })
  try {
    return await child
  } finally {
    signal?.removeEventListener('abort', kill)
  }
}
