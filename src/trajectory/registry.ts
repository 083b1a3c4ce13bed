import type { HarnessName } from '../manifest/harness-names.js'
import { agentdMapper } from './from/agentd.js'
import { claudeCodeMapper } from './from/claude-code.js'
import { codexMapper } from './from/codex.js'
import { commandMapper } from './from/command.js'
import { copilotMapper } from './from/copilot.js'
import { geminiCliMapper } from './from/gemini-cli.js'
import { hermesMapper } from './from/hermes.js'
import { miniSweAgentMapper } from './from/mini-swe-agent.js'
import { opencodeMapper } from './from/opencode.js'
import { openhandsMapper } from './from/openhands.js'
import { piMapper } from './from/pi.js'
import { qwenCodeMapper } from './from/qwen-code.js'
import type { EventMapper } from './schema.js'

/** One event mapper per harness name (the type makes a missing one a compile error). */
export const MAPPERS: Record<HarnessName, EventMapper> = {
  pi: piMapper,
  opencode: opencodeMapper,
  codex: codexMapper,
  'claude-code': claudeCodeMapper,
  'gemini-cli': geminiCliMapper,
  copilot: copilotMapper,
  'qwen-code': qwenCodeMapper,
  openhands: openhandsMapper,
  hermes: hermesMapper,
  'mini-swe-agent': miniSweAgentMapper,
  agentd: agentdMapper,
  command: commandMapper,
}
