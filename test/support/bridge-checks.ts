import { expect } from 'vitest'
import type { SeenToolName } from '../../src/harnesses/mcp.js'
import { type BridgeRunResult, ORDER_CALL, ORDER_MARKER } from './bridge-run.js'

/**
 * What a verified bridge recipe shows (rig.md §0): the harness exits 0; the bridge received the
 * reference call with the model's arguments unchanged; the model called the tool under the harness's
 * expected name; the call's result reached the model (the final answer quotes its marker).
 */
export function expectBridgeRecipeWorks(r: BridgeRunResult, seen: SeenToolName): void {
  const detail = `exit ${r.exitCode}\n${r.stderr.slice(-1500)}`
  expect(r.timedOut, detail).toBe(false)
  expect(r.exitCode, detail).toBe(0)
  expect(r.calls, detail).toEqual([ORDER_CALL])
  const tools = r.records.flatMap((x) => (x.action?.kind === 'tool' ? [x.action.tool] : []))
  const flat = seen.namespace ? `${seen.namespace}.${seen.name}` : seen.name
  expect(tools).toEqual([flat])
  expect(r.parsed.finalMessage).toBe(`Done. ${ORDER_MARKER}`)
}
