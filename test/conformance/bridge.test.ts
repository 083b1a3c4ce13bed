import { describe, expect, it } from 'vitest'
import { defaultCacheDir } from '../../src/harnesses/install.js'
import { MCP_RECIPES } from '../../src/harnesses/mcp.js'
import { adapterFor } from '../../src/harnesses/registry.js'
import type { HarnessName, WireApi } from '../../src/manifest/harness-names.js'
import { expectBridgeRecipeWorks } from '../support/bridge-checks.js'
import { runWithBridge } from '../support/bridge-run.js'

/**
 * Every bridge recipe of src/harnesses/mcp.ts verified on the real CLI (rig.md §0): pinned versions of
 * manifests/local-all.yml, each over its own wire API, against the scripted model and the real tool-bridge on
 * stdio. `HW_CONFORMANCE=pi,codex` runs a subset.
 */
const PINNED: { harness: HarnessName; version: string; api: WireApi; model: string }[] = [
  { harness: 'pi', version: '0.73.1', api: 'chat', model: 'gpt-5-mini' },
  { harness: 'opencode', version: '1.18.33', api: 'chat', model: 'gpt-5-mini' },
  { harness: 'codex', version: '0.171.0', api: 'responses', model: 'gpt-5-mini' },
  { harness: 'claude-code', version: '2.1.332', api: 'anthropic', model: 'claude-sonnet-4-5' },
  { harness: 'gemini-cli', version: '0.61.0', api: 'gemini', model: 'gemini-2.5-flash' },
  { harness: 'copilot', version: '1.0.102', api: 'chat', model: 'gpt-5-mini' },
  { harness: 'qwen-code', version: '0.24.4', api: 'chat', model: 'qwen3-coder-plus' },
]
const only = (process.env.HW_CONFORMANCE ?? '').split(',').filter((s) => s.trim() !== '')

describe.sequential('tool-bridge recipes on the real CLIs', () => {
  for (const pin of PINNED.filter((p) => only.length === 0 || only.includes(p.harness))) {
    it(`${pin.harness}@${pin.version} (${pin.api}) calls the bridge under its own naming`, async () => {
      const installed = await adapterFor(pin.harness).install(pin.version, {
        cacheDir: defaultCacheDir(),
        log: (l) => process.stdout.write(`[${pin.harness}] ${l}\n`),
      })
      const recipe = MCP_RECIPES[pin.harness]
      expect(recipe).not.toBeNull()
      const r = await runWithBridge({ harness: pin.harness, installed, api: pin.api, model: pin.model })
      process.stdout.write(
        `[${pin.harness}] bridge run ${(r.wallMs / 1000).toFixed(1)} s, transport ${r.transport}\n`,
      )
      expectBridgeRecipeWorks(r, (t) => recipe?.toolName(t) ?? { name: '?' })
    })
  }
})
