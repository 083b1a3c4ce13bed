import { beforeAll, describe, expect, it } from 'vitest'
import type { InstalledHarness } from '../../src/harnesses/contract.js'
import { defaultCacheDir } from '../../src/harnesses/install.js'
import { MCP_RECIPES } from '../../src/harnesses/mcp.js'
import { piAdapter } from '../../src/harnesses/pi.js'
import { expectBridgeRecipeWorks } from '../support/bridge-checks.js'
import { runWithBridge } from '../support/bridge-run.js'

/**
 * The one real CLI of the default suite: Pi with our bridge extension (the transport we wrote
 * ourselves), against the scripted model and the real tool-bridge on stdio. Every other recipe is verified
 * by test/conformance/bridge.test.ts.
 */
describe('Pi 0.73.1 reaches the tool-bridge through the extension', () => {
  let installed: InstalledHarness | null = null
  let skip = ''
  beforeAll(async () => {
    try {
      installed = await piAdapter.install('0.73.1', { cacheDir: defaultCacheDir(), log: () => {} })
    } catch (e) {
      skip = `Pi 0.73.1 cannot be installed here: ${(e as Error).message.split('\n')[0]}`
    }
  }, 600_000)

  it('lists, calls and relays a bridge tool; exits without hanging on the stdio child', async (t) => {
    if (!installed) {
      t.skip(skip)
      return
    }
    const r = await runWithBridge({
      harness: 'pi',
      installed,
      api: 'chat',
      model: 'gpt-5-mini',
      timeoutMs: 120_000,
    })
    expect(r.transport).toBe('pi-extension')
    expectBridgeRecipeWorks(r, (t) => MCP_RECIPES.pi?.toolName(t) ?? { name: '?' })
  }, 180_000)

  it('a bridge that cannot start fails the run before any model request, saying why', async (t) => {
    if (!installed) {
      t.skip(skip)
      return
    }
    const r = await runWithBridge({
      harness: 'pi',
      installed,
      api: 'chat',
      model: 'gpt-5-mini',
      timeoutMs: 120_000,
      brokenBridge: true,
    })
    expect(r.exitCode).toBe(1)
    expect(r.records).toEqual([])
    expect(r.calls).toEqual([])
    expect(r.parsed.startupError).toMatch(/Failed to load extension .*bridge-extension\.mjs/)
    expect(r.stderr).toContain('cannot read the environment file')
  }, 180_000)
})
