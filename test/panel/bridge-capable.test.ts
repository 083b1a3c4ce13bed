import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadManifest } from '../../src/manifest/load.js'
import { assertBridgeCapable, bridgeInstances } from '../../src/panel/bridge-capable.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { HwError } from '../../src/util/errors.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

const META = '[metadata]\ndifficulty = "easy"\nlanguage = "javascript"\ncategory = "feature"\n'

/** A panel folder beside the manifest: one bridge task and one coding task. */
function writePanel(dir: string): void {
  const files: Record<string, string> = {
    'order-note/instruction.md': 'Add a note to order W1.',
    'order-note/task.toml': `${META}[hw]\nkind = "bridge"\n[[hw.graders]]\nname = "tool_calls"\n`,
    'order-note/environment/bridge.json': JSON.stringify({
      version: 1,
      world: { orders: { W1: { notes: [] } } },
      tools: [
        {
          name: 'add_note',
          description: 'Add a note.',
          parameters: {
            type: 'object',
            properties: { order_id: { type: 'string' }, note: { type: 'string' } },
            required: ['order_id', 'note'],
          },
          effect: { op: 'append', path: 'orders.{order_id}.notes', value: '{note}' },
        },
      ],
    }),
    'order-note/solution/calls.json': '[{"tool":"add_note","arguments":{"order_id":"W1","note":"hi"}}]',
    'fix-add/instruction.md': 'Fix add.js.',
    'fix-add/task.toml': META,
    'fix-add/environment/add.js': 'module.exports = (a, b) => a - b\n',
    'fix-add/tests/test.sh': 'exit 0\n',
  }
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, 'panel', rel)), { recursive: true })
    writeFileSync(path.join(dir, 'panel', rel), text)
  }
}

async function check(cells: { id: string; harness: string; version: string }[], instances?: string[]) {
  const file = writeManifest(
    baseManifest({
      panel: { source: 'tasks', path: './panel', ...(instances ? { instances } : {}) },
      cells,
      baseline: 'pi',
    }),
  )
  writePanel(path.dirname(file))
  const loaded = await loadManifest(file, { runnable: true })
  const panel = await resolvePanel(loaded.manifest, loaded.dir, file, loaded.locate)
  return { panel, run: () => assertBridgeCapable(loaded.manifest, panel, loaded.locate), file }
}

describe('validate refuses cells that cannot reach the tool-bridge', () => {
  it('names every such cell at its harness field, file and line; MCP CLIs and Pi pass', async () => {
    const { run, file, panel } = await check([
      { id: 'pi', harness: 'pi', version: '0.73.1' },
      { id: 'oh', harness: 'openhands', version: '1.2.0' },
      { id: 'oc', harness: 'opencode', version: '1.18.33' },
      { id: 'mini', harness: 'mini-swe-agent', version: '2.2.0' },
    ])
    expect(await bridgeInstances(panel)).toEqual(['order-note'])
    const err = await run().then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(HwError)
    const e = err as HwError
    expect(e.code).toBe('bridge_unsupported')
    expect(e.message).toBe('the panel has 1 tool-bridge task(s) (e.g. order-note) that 2 cells cannot run')
    expect(e.details).toEqual([
      `${file}:23:14 cells[1].harness: harness "openhands" has no verified way to load the tool-bridge (MCP) headless here`,
      `${file}:29:14 cells[3].harness: harness "mini-swe-agent" has no verified way to load the tool-bridge (MCP) headless here`,
    ])
  })

  it('passes when every cell has a recipe, and for a panel without bridge tasks', async () => {
    const ok = await check([
      { id: 'pi', harness: 'pi', version: '0.73.1' },
      { id: 'cc', harness: 'claude-code', version: '2.1.332' },
    ])
    await expect(ok.run()).resolves.toBeUndefined()
    const coding = await check(
      [
        { id: 'pi', harness: 'pi', version: '0.73.1' },
        { id: 'oh', harness: 'openhands', version: '1.2.0' },
      ],
      ['fix-add'],
    )
    await expect(coding.run()).resolves.toBeUndefined()
  })
})
