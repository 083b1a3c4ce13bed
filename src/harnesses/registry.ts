import { HwError } from '../errors.js'
import { claudeCodeAdapter } from './claude-code.js'
import { codexAdapter } from './codex.js'
import { commandAdapter } from './command.js'
import type { HarnessAdapter } from './contract.js'
import { copilotAdapter } from './copilot.js'
import { geminiCliAdapter } from './gemini-cli.js'
import { HARNESS_NAMES, type HarnessName, isHarnessName } from './names.js'
import { opencodeAdapter } from './opencode.js'
import { piAdapter } from './pi.js'
import { qwenCodeAdapter } from './qwen-code.js'

const ADAPTERS: Partial<Record<HarnessName, HarnessAdapter>> = {
  command: commandAdapter,
  pi: piAdapter,
  opencode: opencodeAdapter,
  codex: codexAdapter,
  'claude-code': claudeCodeAdapter,
  'gemini-cli': geminiCliAdapter,
  copilot: copilotAdapter,
  'qwen-code': qwenCodeAdapter,
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
  const adapter = ADAPTERS[name]
  if (!adapter) throw new HwError('unknown_harness', `harness "${name}" has no adapter yet`)
  return adapter
}
