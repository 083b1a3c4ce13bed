/**
 * The harnesses Harness Watch knows, by the name a manifest uses in `cells[].harness`.
 * This table is the single list the manifest validator checks against; each name has exactly one
 * adapter module in src/harnesses/. `apis` lists the wire APIs the harness can speak (first = default).
 */
export const HARNESSES = {
  pi: {
    package: '@mariozechner/pi-coding-agent',
    apis: ['chat', 'responses', 'anthropic', 'gemini'],
    runnable: true,
  },
  opencode: { package: 'opencode-ai', apis: ['chat', 'anthropic', 'responses'], runnable: true },
  codex: { package: '@openai/codex', apis: ['responses'], runnable: true },
  'claude-code': { package: '@anthropic-ai/claude-code', apis: ['anthropic'], runnable: true },
  'gemini-cli': { package: '@google/gemini-cli', apis: ['gemini'], runnable: true },
  copilot: { package: '@github/copilot', apis: ['chat', 'anthropic', 'responses'], runnable: true },
  'qwen-code': { package: '@qwen-code/qwen-code', apis: ['chat', 'anthropic', 'responses'], runnable: true },
  openhands: { package: null, apis: ['chat', 'responses', 'anthropic'], runnable: false },
  hermes: { package: null, apis: ['chat'], runnable: false },
  'mini-swe-agent': { package: null, apis: ['chat', 'responses', 'anthropic'], runnable: false },
  agentd: { package: null, apis: ['chat'], runnable: false },
  command: { package: null, apis: ['chat', 'responses', 'anthropic', 'gemini'], runnable: true },
} as const satisfies Record<string, { package: string | null; apis: readonly WireApi[]; runnable: boolean }>

export type WireApi = 'chat' | 'responses' | 'anthropic' | 'gemini'
export type HarnessName = keyof typeof HARNESSES
export const HARNESS_NAMES = Object.keys(HARNESSES) as HarnessName[]

/**
 * Why a harness cannot run inside a task's container (sandbox.backend: container), or null when it can.
 * npm harnesses run there with the host's Node mounted read-only; the command harness runs the
 * manifest's own command with the image's shell. The Python harnesses are installed into a virtual
 * environment on the runner, whose interpreter is the runner's own Python: it does not exist at that
 * path in a task image (SWE-bench's /testbed images bring their own Python, with the instance's
 * packages), so the venv cannot start there. Pure.
 */
export function containerRefusal(name: HarnessName): string | null {
  const python: Partial<Record<HarnessName, string>> = {
    openhands: 'OpenHands (pip install openhands, a venv on the runner)',
    hermes: 'Hermes (pip, a venv on the runner)',
    'mini-swe-agent': 'mini-swe-agent (pip install mini-swe-agent, a venv on the runner)',
  }
  const what = python[name]
  if (!what) return null
  return (
    `${what} cannot run inside a task's container: its venv's interpreter is the runner's Python, which the ` +
    "task image does not have, and the image's own Python has neither the harness nor its packages. Its " +
    'adapter is tested to the process boundary (the command line and environment it would start with). ' +
    'Run this cell with sandbox.backend namespace+uid (on the runner), or install the harness in the task image ' +
    'and drive it with harness: command'
  )
}

export function isHarnessName(s: string): s is HarnessName {
  return Object.hasOwn(HARNESSES, s)
}
