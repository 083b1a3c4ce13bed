import { HARNESS_NAMES, type HarnessName, isHarnessName } from '../manifest/harness-names.js'
import { HwError } from '../util/errors.js'
import { agentdAdapter } from './agentd.js'
import { claudeCodeAdapter } from './claude-code.js'
import { codexAdapter } from './codex.js'
import { commandAdapter } from './command.js'
import type { HarnessAdapter } from './contract.js'
import { copilotAdapter } from './copilot.js'
import { geminiCliAdapter } from './gemini-cli.js'
import { hermesAdapter } from './hermes.js'
import { miniSweAgentAdapter } from './mini-swe-agent.js'
import { opencodeAdapter } from './opencode.js'
import { openhandsAdapter } from './openhands.js'
import { piAdapter } from './pi.js'
import { qwenCodeAdapter } from './qwen-code.js'

/** One adapter per harness name in names.ts (the type makes a missing one a compile error). */
export const ADAPTERS: Record<HarnessName, HarnessAdapter> = {
  pi: piAdapter,
  opencode: opencodeAdapter,
  codex: codexAdapter,
  'claude-code': claudeCodeAdapter,
  'gemini-cli': geminiCliAdapter,
  copilot: copilotAdapter,
  'qwen-code': qwenCodeAdapter,
  openhands: openhandsAdapter,
  hermes: hermesAdapter,
  'mini-swe-agent': miniSweAgentAdapter,
  agentd: agentdAdapter,
  command: commandAdapter,
}

/**
 * The adapter of a harness named in a manifest cell. Throws HwError `unknown_harness` for a name that
 * is not in names.ts (the manifest validator catches that earlier; this guards other callers).
 */
export function adapterFor(name: string): HarnessAdapter {
  if (!isHarnessName(name)) {
    throw new HwError('unknown_harness', `unknown harness "${name}"`, {
      where: 'cells[].harness',
      help: `use one of: ${HARNESS_NAMES.join(', ')}`,
    })
  }
  return ADAPTERS[name]
}
