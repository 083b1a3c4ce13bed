import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseToml, TomlError } from 'smol-toml'
import { z } from 'zod'
import { fieldPath } from '../manifest/load.js'
import { InstanceId, Seconds } from '../manifest/schema.js'
import { HwError } from '../util/errors.js'
import { parseImageRef } from '../util/image-ref.js'

/** Harbor's network modes: the open network, none, or named hosts (not enforced here: refused in validation). */
const NetworkMode = z.enum(['public', 'no-network', 'allowlist'])

/**
 * task.toml of a Harbor-layout task folder. Harbor's own keys (version, author_*, [environment],
 * [solution]) are accepted so its task files load unchanged; `[hw]` holds what Harness Watch adds.
 */
export const TaskTomlSchema = z.strictObject({
  version: z.string().optional(),
  /**
   * Harbor's [metadata] is free-form (author_name, difficulty, category, tags… as each benchmark writes
   * them): any key is accepted; the few this tool reads are typed when present.
   */
  metadata: z
    .looseObject({
      difficulty: z.string().min(1).optional(),
      language: z.string().min(1).optional(),
      category: z.string().min(1).optional(),
      tags: z.array(z.string().min(1)).default([]),
    })
    .default({ tags: [] }),
  task: z
    .strictObject({
      name: z.string().min(1).optional(),
      description: z.string().optional(),
      authors: z.array(z.unknown()).optional(),
      keywords: z.array(z.string()).optional(),
    })
    .optional(),
  verifier: z
    .strictObject({
      timeout_sec: Seconds.default(60),
      env: z.record(z.string(), z.string()).optional(),
      user: z.union([z.string().min(1), z.number().int().min(0)]).optional(),
      network_mode: NetworkMode.optional(),
      allowed_hosts: z.array(z.string()).optional(),
      environment_mode: z
        .enum(['shared', 'separate'])
        .optional()
        .describe(
          "shared: tests/test.sh runs in the agent's container (Harbor's default); separate: a fresh one",
        ),
    })
    .default({ timeout_sec: 60 }),
  agent: z
    .strictObject({
      timeout_sec: Seconds.default(300),
      user: z.union([z.string().min(1), z.number().int().min(0)]).optional(),
      network_mode: NetworkMode.optional(),
    })
    .default({ timeout_sec: 300 }),
  hw: z
    .strictObject({
      kind: z
        .enum(['tests', 'bridge'])
        .default('tests')
        .describe('tests: tests/test.sh grades; bridge: environment/bridge.json tools, graders below'),
      graders: z
        .array(z.record(z.string(), z.unknown()))
        .optional()
        .describe(
          'bridge tasks: [[hw.graders]] name = "tool_calls" | "bfcl" | "end_state" | "files" | "command" | "answer", plus its fields',
        ),
      test_command: z
        .string()
        .min(1)
        .optional()
        .describe('visible tests the agent may run in the workspace, e.g. "node --test"'),
    })
    .default({ kind: 'tests' }),
  environment: z
    .strictObject({
      docker_image: z
        .string()
        .refine(
          (v) => parseImageRef(v) !== null,
          'not a valid image reference (name[:tag][@sha256:<64 hex>])',
        )
        .optional(),
      build_timeout_sec: Seconds.optional(),
      cpus: z.number().positive().max(1024).optional(),
      memory_mb: z.number().int().min(64).optional(),
      storage_mb: z.number().int().positive().optional(),
      gpus: z.number().int().min(0).max(0, 'GPUs are not supported by the container backend').optional(),
      os: z.enum(['linux']).optional(),
      network_mode: NetworkMode.optional(),
      allowed_hosts: z.array(z.string()).optional(),
      env: z.record(z.string(), z.string()).optional(),
      mcp_servers: z.array(z.record(z.string(), z.unknown())).optional(),
      healthcheck: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  solution: z.record(z.string(), z.unknown()).optional(),
})
export type TaskToml = z.output<typeof TaskTomlSchema>
export type TaskMeta = TaskToml['metadata']

/** A validated task folder. Paths are absolute. */
export interface Task {
  /** The folder name; the instance id. */
  id: string
  dir: string
  /** instruction.md: the prompt given to the harness. */
  instruction: string
  meta: TaskMeta
  /** Seconds tests/test.sh may run. */
  verifierTimeoutS: number
  /** Seconds a harness (or solution/solve.sh) may run. */
  agentTimeoutS: number
  /** Visible test command the agent may run, or null when the task does not name one. */
  testCommand: string | null
  /** Extra variables task.toml sets for the verifier ([verifier] env). */
  verifierEnv: Record<string, string>
  hasSolution: boolean
  /** `tests` (tests/test.sh grades) or `bridge` (tool-bridge task; see src/panel/bridge-task.ts). */
  kind: 'tests' | 'bridge'
  /**
   * Harbor's container environment, when the task declares one (environment/Dockerfile or
   * [environment] docker_image): the workspace then starts from the image's working directory, not from
   * a copy of environment/.
   */
  container: TaskContainer | null
  /** task.toml's [environment], [agent] and [verifier] container fields as read (for the container backend). */
  harbor: {
    resources: { cpus?: number; memory_mb?: number; storage_mb?: number }
    agentNetwork: 'public' | 'no-network' | 'allowlist' | null
    verifierNetwork: 'public' | 'no-network' | 'allowlist' | null
    environmentMode: 'shared' | 'separate'
  }
  paths: {
    /** Repo copied into each attempt's workspace. */
    environment: string
    /** Hidden verifier folder (HW_TESTS_DIR). */
    tests: string
    testScript: string
    /** solution/solve.sh (a bridge task: solution/calls.json), or null when absent. */
    solveScript: string | null
  }
}

/** Where a Harbor task's image comes from. */
export type TaskContainer =
  | { kind: 'dockerfile'; context: string; buildTimeoutS: number }
  | { kind: 'image'; ref: string }

/**
 * Instruction files that some harnesses read and others do not (design/harnesses.md §3.6). A task repo
 * holding one would give the harnesses different prompts, so environments must have none.
 */
export const HARNESS_INSTRUCTION_FILES = [
  'AGENTS.md',
  'CLAUDE.md',
  'GEMINI.md',
  'QWEN.md',
  'CONTEXT.md',
  '.github/copilot-instructions.md',
] as const

/**
 * Load and validate one task folder: instruction.md (non-empty), task.toml (TaskTomlSchema),
 * environment/ (a folder with no harness instruction file), tests/test.sh, optional solution/solve.sh.
 * Throws HwError `task_invalid` whose `where` is the offending file and whose message starts with the
 * field (`metadata.difficulty: …`); further problems in the same file are in `details`.
 */
export async function loadTask(dir: string): Promise<Task> {
  const abs = path.resolve(dir)
  const id = path.basename(abs)
  const idOk = InstanceId.safeParse(id)
  if (!idOk.success) {
    throw new HwError(
      'task_invalid',
      `task folder name is not a valid instance id: ${idOk.error.issues[0]?.message}`,
      {
        where: abs,
      },
    )
  }
  if (!(await isDir(abs)))
    throw new HwError('task_invalid', 'not a task folder (no such directory)', { where: abs })

  const instructionFile = path.join(abs, 'instruction.md')
  const instruction = await readRequired(instructionFile, 'the prompt given to the harness')
  if (instruction.trim() === '') {
    throw new HwError('task_invalid', 'instruction.md is empty', {
      where: instructionFile,
      help: 'write the task prompt: what to change, and the visible test command',
    })
  }

  const tomlFile = path.join(abs, 'task.toml')
  const toml = parseTaskToml(await readRequired(tomlFile, 'the task metadata'), tomlFile)

  const environment = path.join(abs, 'environment')
  if (!(await isDir(environment))) {
    throw new HwError('task_invalid', 'missing environment/ folder (the repo copied into the workspace)', {
      where: abs,
    })
  }
  const stray = await findInstructionFiles(environment)
  if (stray.length > 0) {
    throw new HwError('task_invalid', `environment/ holds harness instruction files: ${stray.join(', ')}`, {
      where: environment,
      help: 'remove them: each harness reads a different one, so the harnesses would not see the same task',
    })
  }

  const tests = path.join(abs, 'tests')
  const testScript = path.join(tests, 'test.sh')
  if (toml.hw.kind === 'tests' && !(await isFile(testScript))) {
    throw new HwError('task_invalid', 'missing tests/test.sh (the hidden verifier)', { where: abs })
  }
  const solveFile = path.join(abs, 'solution', toml.hw.kind === 'bridge' ? 'calls.json' : 'solve.sh')
  const hasSolution = await isFile(solveFile)
  const env = toml.environment ?? {}
  // Harbor's default build timeout is 600 s.
  const container: TaskContainer | null = (await isFile(path.join(environment, 'Dockerfile')))
    ? { kind: 'dockerfile', context: environment, buildTimeoutS: env.build_timeout_sec ?? 600 }
    : env.docker_image
      ? { kind: 'image', ref: env.docker_image }
      : null
  const agentNetwork = toml.agent.network_mode ?? env.network_mode ?? null
  const verifierNetwork = toml.verifier.network_mode ?? env.network_mode ?? null
  for (const [field, mode] of [
    ['agent.network_mode', agentNetwork],
    ['verifier.network_mode', verifierNetwork],
  ] as const) {
    if (mode === 'allowlist') {
      throw new HwError(
        'task_invalid',
        `${field}: "allowlist" is not supported (use "public" or "no-network")`,
        {
          where: tomlFile,
        },
      )
    }
  }

  return {
    id,
    dir: abs,
    instruction,
    meta: toml.metadata,
    verifierTimeoutS: toml.verifier.timeout_sec,
    agentTimeoutS: toml.agent.timeout_sec,
    testCommand: toml.hw.test_command ?? null,
    verifierEnv: toml.verifier.env ?? {},
    hasSolution,
    kind: toml.hw.kind,
    container,
    harbor: {
      resources: {
        ...(env.cpus !== undefined ? { cpus: env.cpus } : {}),
        ...(env.memory_mb !== undefined ? { memory_mb: env.memory_mb } : {}),
        ...(env.storage_mb !== undefined ? { storage_mb: env.storage_mb } : {}),
      },
      agentNetwork,
      verifierNetwork,
      environmentMode: toml.verifier.environment_mode ?? 'shared',
    },
    paths: { environment, tests, testScript, solveScript: hasSolution ? solveFile : null },
  }
}

/**
 * Parse and validate task.toml text; `file` names it in messages. Throws HwError `task_invalid`:
 * `not valid TOML: …` (with line:column in `where`) or `<field>: <problem>`.
 */
export function parseTaskToml(text: string, file: string): TaskToml {
  let value: unknown
  try {
    value = parseToml(text)
  } catch (e) {
    if (e instanceof TomlError) {
      throw new HwError('task_invalid', `not valid TOML: ${e.message.split('\n')[0]}`, {
        where: `${file}:${e.line}:${e.column}`,
      })
    }
    throw e
  }
  const result = TaskTomlSchema.safeParse(value, { reportInput: true })
  if (result.success) return result.data
  const [first, ...rest] = result.error.issues.map((i) => `${fieldPath(i.path)}: ${describeIssue(i)}`)
  throw new HwError('task_invalid', first ?? 'invalid task.toml', {
    where: file,
    details: rest,
    help: "task.toml follows Harbor's format ([metadata], [verifier], [agent], [environment], [solution]); see manifests/panels/core for examples",
  })
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const input = (issue as { input?: unknown }).input
  switch (issue.code) {
    case 'invalid_type':
      return input === undefined
        ? `required field is missing (expected ${issue.expected})`
        : `expected ${issue.expected}, got ${JSON.stringify(input)}`
    case 'invalid_value': {
      const allowed = issue.values.map((v) => JSON.stringify(v)).join(', ')
      return input === undefined
        ? `required field is missing (expected one of ${allowed})`
        : `expected one of ${allowed}, got ${JSON.stringify(input)}`
    }
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
    case 'too_small':
      if (issue.origin === 'number') return `expected a number > ${issue.minimum}, got ${input}`
      return issue.origin === 'string' ? 'must not be empty' : issue.message
    default:
      return issue.message
  }
}

async function readRequired(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    throw new HwError(
      'task_invalid',
      code === 'ENOENT' ? `missing ${path.basename(file)} (${what})` : `cannot read (${code})`,
      { where: code === 'ENOENT' ? path.dirname(file) : file },
    )
  }
}

/** Relative paths of harness instruction files anywhere under `root`. */
export async function findInstructionFiles(root: string): Promise<string[]> {
  const names = new Set(HARNESS_INSTRUCTION_FILES.map((f) => path.basename(f)))
  const found: string[] = []
  const entries = await readdir(root, { recursive: true, withFileTypes: true })
  for (const e of entries) {
    if (!e.isFile() || !names.has(e.name)) continue
    const rel = path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/')
    const isCopilot = e.name === 'copilot-instructions.md'
    if (!isCopilot || rel.endsWith('.github/copilot-instructions.md')) found.push(rel)
  }
  return found.sort()
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isDirectory() ?? false
}

async function isFile(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isFile() ?? false
}
