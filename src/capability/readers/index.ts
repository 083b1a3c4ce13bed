import type { HarnessName } from '../../manifest/harness-names.js'
import type { ConfiguredCapabilities } from '../../records/capabilities.js'
import { messageOf } from '../../util/errors.js'
import { allUnknown, type CapabilityInput, type CapabilityReader, known } from '../facts.js'
import { readClaudeCodeCapabilities } from './claude-code.js'
import { readCodexCapabilities } from './codex.js'
import { readOpencodeCapabilities } from './opencode.js'
import { readPiCapabilities } from './pi.js'

/** Harnesses whose configuration is read for capabilities; every other one states them unknown. */
export const CAPABILITY_READERS: Partial<Record<HarnessName, CapabilityReader>> = {
  pi: readPiCapabilities,
  opencode: readOpencodeCapabilities,
  codex: readCodexCapabilities,
  'claude-code': readClaudeCodeCapabilities,
}

/**
 * What a harness's own configuration says it can do. A harness without a reader, or a reader that
 * fails, gives every capability unknown with the reason — never a guess. The wire API the cell speaks
 * is always known.
 */
export async function readConfiguredCapabilities(
  harness: string,
  input: CapabilityInput,
): Promise<ConfiguredCapabilities> {
  const reader = CAPABILITY_READERS[harness as HarnessName]
  const route = { request_routes: known<'request_routes'>([input.api], "the cell's wire API") }
  if (!reader) return { ...allUnknown(`the ${harness} adapter does not read its capabilities`), ...route }
  try {
    return await reader(input)
  } catch (e) {
    return {
      ...allUnknown(`reading the ${harness} configuration failed: ${messageOf(e).slice(0, 200)}`),
      ...route,
    }
  }
}
