import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { HwError } from '../util/errors.js'
import { quotePath } from '../util/paths.js'
import { BASH_SCHEMA, bashTool } from './builtins/bash.js'
import { READ_FILE_SCHEMA, readFileTool, WRITE_FILE_SCHEMA, writeFileTool } from './builtins/files.js'
import { applyEffect, isToolError, type World } from './effects.js'
import { type Environment, isBuiltin, type ToolDecl } from './env-schema.js'
import type { ToolOutcome, ToolProvider, ToolSpec } from './provider.js'

const BUILTIN_SCHEMA = { bash: BASH_SCHEMA, read_file: READ_FILE_SCHEMA, write_file: WRITE_FILE_SCHEMA }
const BUILTIN_DESCRIPTION = {
  bash: 'Run a bash command in the working folder; returns the exit code and output.',
  read_file: 'Read a text file in the working folder.',
  write_file: 'Create or replace a text file in the working folder.',
}

/** The world file inside a state folder. */
export const WORLD_FILE = 'world.json'

/**
 * Serves an environment's tools. The world lives in `<stateDir>/world.json`: read at start when it
 * exists (a resumed turn starts a new server), else the environment's initial world; rewritten
 * (write-then-rename) after every call that changes it. Builtins work in `sandboxRoot` (a real path).
 */
export class EnvProvider implements ToolProvider {
  private world: World
  private readonly specs: ToolSpec[]
  private readonly byName: Map<string, ToolDecl>
  private readonly worldFile: string

  constructor(
    env: Environment,
    stateDir: string,
    private readonly sandboxRoot: string,
  ) {
    this.worldFile = path.join(stateDir, WORLD_FILE)
    this.world = existsSync(this.worldFile) ? readWorld(this.worldFile) : structuredClone(env.world)
    this.byName = new Map(env.tools.map((t) => [t.name, t]))
    this.specs = env.tools.map((t) =>
      isBuiltin(t)
        ? {
            name: t.name,
            description: t.description ?? BUILTIN_DESCRIPTION[t.builtin],
            inputSchema: BUILTIN_SCHEMA[t.builtin],
          }
        : { name: t.name, description: t.description, inputSchema: t.parameters },
    )
    this.save()
  }

  tools(): ToolSpec[] {
    return this.specs
  }

  /** The current world (a copy). */
  snapshot(): World {
    return structuredClone(this.world)
  }

  async call(name: string, args: unknown): Promise<ToolOutcome> {
    const t = this.byName.get(name)
    if (!t) return { status: 'invalid_arguments', code: 'unknown_tool', text: `unknown tool "${name}"` }
    const a = (args ?? {}) as Record<string, unknown>
    if (isBuiltin(t)) {
      if (t.builtin === 'bash') return bashTool(this.sandboxRoot, a as { command: string }, t.timeout_s)
      if (t.builtin === 'read_file') return readFileTool(this.sandboxRoot, a as { path: string })
      return writeFileTool(this.sandboxRoot, a as { path: string; content: string })
    }
    const r = applyEffect(this.world, t.effect, a)
    if (isToolError(r)) return { status: 'error', code: r.code, text: r.message }
    if (r.world !== this.world) {
      this.world = r.world
      this.save()
    }
    return { status: 'ok', text: typeof r.result === 'string' ? r.result : JSON.stringify(r.result ?? null) }
  }

  private save(): void {
    const tmp = `${this.worldFile}.tmp`
    writeFileSync(tmp, `${JSON.stringify(this.world, null, 2)}\n`)
    renameSync(tmp, this.worldFile)
  }
}

function readWorld(file: string): World {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as World
  } catch {
    // reported below
  }
  throw new HwError('bridge_state_invalid', `${quotePath(file)}: not a JSON object`, {
    help: "remove the file to start from the environment's initial world",
  })
}
