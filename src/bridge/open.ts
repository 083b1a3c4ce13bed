import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { HwError } from '../util/errors.js'
import { quotePath } from '../util/paths.js'
import { realRoot } from './builtins/confine.js'
import { CallLog, TraceLog } from './calls.js'
import { Dispatcher } from './dispatch.js'
import { EnvProvider } from './env-provider.js'
import { loadEnvironment } from './env-schema.js'

/** The calls log inside a state folder. */
export const CALLS_FILE = 'calls.jsonl'
/** The private calls-with-arguments record inside a state folder (grading only; never in an artifact). */
export const TRACE_FILE = 'trace.jsonl'

/**
 * A dispatcher over an environment file: the world in `<stateDir>/world.json`, calls logged to
 * `<stateDir>/calls.jsonl`, builtins confined to `sandbox`. Throws HwError on a bad file or folder.
 */
export async function openEnvironment(
  envFile: string,
  stateDir: string,
  sandbox: string,
): Promise<{ dispatcher: Dispatcher; provider: EnvProvider }> {
  const env = await loadEnvironment(envFile)
  mkdirSync(stateDir, { recursive: true })
  let root: string
  try {
    root = await realRoot(sandbox)
  } catch {
    throw new HwError('bridge_sandbox_missing', `${quotePath(sandbox)}: the sandbox folder does not exist`)
  }
  const provider = new EnvProvider(env, stateDir, root)
  return {
    dispatcher: new Dispatcher(
      provider,
      new CallLog(path.join(stateDir, CALLS_FILE)),
      new TraceLog(path.join(stateDir, TRACE_FILE)),
    ),
    provider,
  }
}
