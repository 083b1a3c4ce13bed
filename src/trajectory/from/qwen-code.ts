import type { EventMapper } from '../schema.js'
import { mapStreamJson } from './stream-json.js'

/** Qwen Code `--output-format stream-json` (Claude Code's format; see stream-json.ts). */
export const qwenCodeMapper: EventMapper = {
  version: 1,
  map: (raw, ref) => mapStreamJson(raw, ref, qwenCodeMapper.version),
}
