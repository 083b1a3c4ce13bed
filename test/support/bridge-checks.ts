import { expect } from 'vitest'
import type { SeenToolName } from '../../src/harnesses/mcp.js'
import { type BridgeRunResult, ORDER_MARKER } from './bridge-run.js'

/**
 * What a verified bridge recipe shows (rig.md §0): the harness exits 0; the bridge logged both reference
 * calls as ok (its own schema check passed on the arguments the harness relayed); the write reached the
 * world; the model called the tools under the harness's expected names; the read's result reached the
 * model (the final answer quotes the world's marker and the note).
 */
export function expectBridgeRecipeWorks(r: BridgeRunResult, seen: (tool: string) => SeenToolName): void {
  const detail = `exit ${r.exitCode}\n${r.stderr.slice(-1500)}`
  expect(r.timedOut, detail).toBe(false)
  expect(r.exitCode, detail).toBe(0)
  expect(
    r.calls.map((c) => `${c.tool}:${c.status}`),
    detail,
  ).toEqual(['add_note:ok', 'get_order:ok'])
  expect(r.world).toMatchObject({ orders: { W1234567: { notes: [{ text: 'leave at the door' }] } } })
  const tools = r.records.flatMap((x) => (x.action?.kind === 'tool' ? [x.action.tool] : []))
  const flat = (t: string) => {
    const s = seen(t)
    return s.namespace ? `${s.namespace}.${s.name}` : s.name
  }
  expect(tools).toEqual([flat('add_note'), flat('get_order')])
  expect(r.parsed.finalMessage).toContain(ORDER_MARKER)
  expect(r.parsed.finalMessage).toContain('leave at the door')
}
