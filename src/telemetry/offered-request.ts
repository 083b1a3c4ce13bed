import type { LedgerRow, OfferedTool } from '../records/ledger.js'
import { offeredTools } from './offered-tools.js'
import { decodeJsonBody, type PathInfo, type RequestInfo } from './request-shape.js'

/** A request's summary with the tools it offered (names and schema hashes), read once per request. */
type WithTools = RequestInfo & { offeredTools?: OfferedTool[] | null }

/**
 * The request's summary with its offered tools attached: the body is read for names and hashes only
 * when the shape counted tools, so a request without tools costs nothing more.
 */
export function withOfferedTools(
  info: RequestInfo,
  path: PathInfo,
  body: Buffer,
  contentEncoding: string | undefined,
): RequestInfo {
  if ((info.shape.tools ?? 0) === 0) return info
  const tools = offeredTools(path.api, decodeJsonBody(body, contentEncoding))
  return { ...info, offeredTools: tools } as WithTools
}

/** The row's `tools_offered` field, when the request offered any. */
export function offeredToolsField(info: RequestInfo): Pick<LedgerRow, 'tools_offered'> {
  const tools = (info as WithTools).offeredTools
  return tools && tools.length > 0 ? { tools_offered: tools } : {}
}
