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

export function isHarnessName(s: string): s is HarnessName {
  return Object.hasOwn(HARNESSES, s)
}
