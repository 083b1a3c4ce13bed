import type { EventMapper } from '../schema.js'
import { mapStreamJson } from './stream-json.js'

/** Claude Code `-p --output-format stream-json --verbose` (see stream-json.ts). */
export const claudeCodeMapper: EventMapper = {
  version: 1,
  map: (raw, ref) => mapStreamJson(raw, ref, claudeCodeMapper.version),
}
