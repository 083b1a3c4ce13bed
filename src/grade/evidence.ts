import { readFileSync } from 'node:fs'
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { readTrace } from '../bridge/calls.js'
import type { World } from '../bridge/effects.js'
import { WORLD_FILE } from '../bridge/env-provider.js'
import type { Environment } from '../bridge/env-schema.js'
import { TRACE_FILE } from '../bridge/open.js'
import type { Evidence, ReferenceCall } from './types.js'

/**
 * Evidence of one attempt from its bridge state folder: the final world (`world.json`; the initial world
 * when the harness never started the bridge) and the private call trace. Throws when world.json exists
 * but is not a JSON object (the grade is then an error, never a 0).
 */
export async function collectEvidence(opts: {
  env: Environment
  reference: ReferenceCall[]
  stateDir: string
  workspace: string
  answer: string | null
}): Promise<Evidence> {
  const worldFile = path.join(opts.stateDir, WORLD_FILE)
  let world: World = structuredClone(opts.env.world)
  let text: string | null = null
  try {
    text = readFileSync(worldFile, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
  }
  if (text !== null) {
    const v = JSON.parse(text) as unknown
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${worldFile}: not a JSON object`)
    world = v as World
  }
  const { calls } = readTrace(path.join(opts.stateDir, TRACE_FILE))
  return {
    env: opts.env,
    initialWorld: structuredClone(opts.env.world),
    world,
    calls,
    reference: opts.reference,
    workspace: await realpath(opts.workspace),
    answer: opts.answer,
  }
}
