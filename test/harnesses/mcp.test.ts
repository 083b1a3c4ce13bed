import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import type { BridgeEndpoint } from '../../src/harnesses/bridge-endpoint.js'
import type { HarnessAdapter } from '../../src/harnesses/contract.js'
import { bridgeRefusal, MCP_RECIPES, wireBridge, withLeadingFlags } from '../../src/harnesses/mcp.js'
import { piBridgeSource } from '../../src/harnesses/pi-bridge.js'
import { adapterFor } from '../../src/harnesses/registry.js'
import { HARNESS_NAMES, type HarnessName } from '../../src/manifest/harness-names.js'
import { fakeInstalled, leaks, makeCtx, useAttemptDirs } from './helpers.js'

const STDIO: BridgeEndpoint = {
  kind: 'stdio',
  command: '/usr/bin/node',
  args: ['/hw/cli.js', 'bridge', 'serve', '--env', '/t/bridge.json', '--state', '/s/w 1'],
}
const HTTP: BridgeEndpoint = { kind: 'http', url: 'http://127.0.0.1:4700/mcp' }

async function prepared(
  harness: HarnessName,
  dirs: { workspace: string; home: string; tmp: string },
  bin: string,
) {
  const adapter: HarnessAdapter = adapterFor(harness)
  const ctx = makeCtx(dirs, {
    api: harness === 'codex' ? 'responses' : harness === 'gemini-cli' ? 'gemini' : 'chat',
  })
  const inv = await adapter.prepare(fakeInstalled(harness, bin), ctx)
  return { ctx, inv }
}
const json = async (file: string) => JSON.parse(await readFile(file, 'utf8'))

describe('bridge recipes (rig.md §2), rendered into each harness isolated home', () => {
  const dirs = useAttemptDirs()

  it('Claude Code: its own config file, --mcp-config first and strict, tool search off', async () => {
    const { ctx, inv } = await prepared('claude-code', dirs, '/cache/claude')
    const { invocation, transport } = await wireBridge('claude-code', inv, ctx, STDIO)
    const file = path.join(dirs.home, '.claude', 'hw-mcp.json')
    expect(await json(file)).toEqual({ mcpServers: { bridge: { command: STDIO.command, args: STDIO.args } } })
    expect(invocation.args.slice(0, 3)).toEqual(['--mcp-config', file, '--strict-mcp-config'])
    // the prompt stays the last argument, the adapter's flags all kept
    expect(invocation.args.slice(3)).toEqual(inv.args)
    expect(invocation.env).toMatchObject({ ENABLE_TOOL_SEARCH: 'false', MCP_TIMEOUT: '60000' })
    expect(transport).toBe('mcp-stdio')
    const http = await wireBridge('claude-code', inv, ctx, HTTP)
    expect(await json(file)).toEqual({ mcpServers: { bridge: { type: 'http', url: HTTP.url } } })
    expect(http.transport).toBe('mcp-http')
  })

  it('Codex: [mcp_servers.bridge] merged into the adapter config.toml, provider settings intact', async () => {
    const { ctx, inv } = await prepared('codex', dirs, '/cache/codex')
    const { invocation } = await wireBridge('codex', inv, ctx, STDIO)
    const doc = parseToml(await readFile(path.join(dirs.home, '.codex', 'config.toml'), 'utf8')) as Record<
      string,
      unknown
    >
    expect(doc.mcp_servers).toEqual({
      bridge: { command: STDIO.command, args: STDIO.args, required: true, startup_timeout_sec: 60 },
    })
    // Codex would otherwise send its first request without a bridge that is still starting
    expect(doc.mcp_optional_startup_grace_ms).toBe(60_000)
    expect(doc.model_provider).toBe('hw')
    expect(doc.approval_policy).toBe('never')
    expect(invocation).toEqual(inv)
    await wireBridge('codex', inv, ctx, HTTP)
    const again = parseToml(await readFile(path.join(dirs.home, '.codex', 'config.toml'), 'utf8')) as Record<
      string,
      unknown
    >
    expect(again.mcp_servers).toEqual({ bridge: { url: HTTP.url, required: true, startup_timeout_sec: 60 } })
  })

  it('Gemini CLI and Qwen Code: mcpServers merged into settings.json (trust; Qwen alwaysLoadTools)', async () => {
    const g = await prepared('gemini-cli', dirs, '/cache/gemini.js')
    await wireBridge('gemini-cli', g.inv, g.ctx, STDIO)
    const gs = await json(path.join(dirs.home, '.gemini', 'settings.json'))
    expect(gs.mcpServers).toEqual({ bridge: { command: STDIO.command, args: STDIO.args, trust: true } })
    expect(gs.security.auth.selectedType).toBe('gemini-api-key')
    await wireBridge('gemini-cli', g.inv, g.ctx, HTTP)
    expect((await json(path.join(dirs.home, '.gemini', 'settings.json'))).mcpServers).toEqual({
      bridge: { httpUrl: HTTP.url, trust: true },
    })
    const q = await prepared('qwen-code', dirs, '/cache/cli-entry.js')
    await wireBridge('qwen-code', q.inv, q.ctx, STDIO)
    const qs = await json(path.join(dirs.home, '.qwen', 'settings.json'))
    expect(qs.mcpServers).toEqual({
      bridge: { command: STDIO.command, args: STDIO.args, alwaysLoadTools: true, trust: true },
    })
    expect(qs.model).toEqual({ name: 'claude-sonnet-4-5' })
  })

  it('OpenCode: mcp.bridge in the OPENCODE_CONFIG file (local command array, or remote)', async () => {
    const { ctx, inv } = await prepared('opencode', dirs, '/cache/opencode')
    await wireBridge('opencode', inv, ctx, STDIO)
    const file = inv.env.OPENCODE_CONFIG as string
    const doc = await json(file)
    expect(doc.mcp).toEqual({
      bridge: { type: 'local', command: [STDIO.command, ...STDIO.args], enabled: true },
    })
    expect(doc.provider.hw.options.apiKey).toBe('{env:HW_API_KEY}')
    await wireBridge('opencode', inv, ctx, HTTP)
    expect((await json(file)).mcp).toEqual({ bridge: { type: 'remote', url: HTTP.url, enabled: true } })
  })

  it('Copilot: --additional-mcp-config @file before its flags, every tool allowed', async () => {
    const { ctx, inv } = await prepared('copilot', dirs, '/cache/copilot')
    const { invocation } = await wireBridge('copilot', inv, ctx, STDIO)
    const file = path.join(dirs.home, '.copilot', 'hw-mcp.json')
    expect(invocation.args.slice(0, 2)).toEqual(['--additional-mcp-config', `@${file}`])
    expect(await json(file)).toEqual({
      mcpServers: { bridge: { type: 'local', command: STDIO.command, args: STDIO.args, tools: ['*'] } },
    })
  })

  it('Pi: our extension, loaded with -e after the entry script (node cli.js -e ext …)', async () => {
    const { ctx, inv } = await prepared('pi', dirs, '/cache/pi/dist/cli.js')
    const { invocation, transport } = await wireBridge('pi', inv, ctx, STDIO)
    const ext = path.join(dirs.home, '.pi', 'hw-bridge', 'bridge-extension.mjs')
    expect(invocation.command).toBe(process.execPath)
    expect(invocation.args.slice(0, 3)).toEqual(['/cache/pi/dist/cli.js', '-e', ext])
    expect(invocation.args.slice(3)).toEqual(inv.args.slice(1))
    expect(transport).toBe('pi-extension')
    const source = await readFile(ext, 'utf8')
    expect(source).toContain(JSON.stringify(STDIO))
    expect(source).toContain("'bridge_' + tool.name")
    expect(source).toContain("pi.on('session_shutdown'")
  })

  it('no recipe writes a secret or the runner environment into the wired invocation', async () => {
    for (const h of ['claude-code', 'copilot', 'pi', 'opencode'] as const) {
      const { ctx, inv } = await prepared(h, dirs, h === 'pi' ? '/c/cli.js' : '/c/bin')
      const { invocation } = await wireBridge(h, inv, ctx, STDIO)
      expect(leaks(invocation.env), h).toEqual([])
    }
  })
})

describe('which harnesses can run a bridge panel', () => {
  it('the seven npm CLIs and agentd have a recipe; the others are refused with a reason', () => {
    const wired = HARNESS_NAMES.filter((h) => MCP_RECIPES[h] !== null).sort()
    expect(wired).toEqual([
      'agentd',
      'claude-code',
      'codex',
      'copilot',
      'gemini-cli',
      'opencode',
      'pi',
      'qwen-code',
    ])
    for (const h of HARNESS_NAMES) {
      const why = bridgeRefusal(h)
      if (MCP_RECIPES[h]) expect(why).toBeNull()
      else expect(why).toMatch(new RegExp(`harness "${h}"`))
    }
  })

  it('wiring a refused harness throws that reason', async () => {
    const inv = { command: 'bash', args: [], env: {}, cwd: '/' }
    await expect(
      wireBridge('openhands', inv, makeCtx({ workspace: '/w', home: '/h', tmp: '/t' }), STDIO),
    ).rejects.toThrow(/no verified way to load the tool-bridge/)
  })

  it('tool names per harness (rig.md §0)', () => {
    const seen = Object.fromEntries(
      HARNESS_NAMES.filter((h) => MCP_RECIPES[h]).map((h) => [h, MCP_RECIPES[h]?.toolName('get_order')]),
    )
    expect(seen).toEqual({
      pi: { name: 'bridge_get_order' },
      opencode: { name: 'bridge_get_order' },
      codex: { name: 'get_order', namespace: 'mcp__bridge' },
      'claude-code': { name: 'mcp__bridge__get_order' },
      'gemini-cli': { name: 'mcp_bridge_get_order' },
      copilot: { name: 'bridge-get_order' },
      'qwen-code': { name: 'mcp__bridge__get_order' },
      agentd: { name: 'get_order' },
    })
  })

  it('leading flags go after a JS entry script, first for a native binary', () => {
    const js = { command: process.execPath, args: ['/x/cli.js', '-p', 'hi'], env: {}, cwd: '/' }
    expect(withLeadingFlags(js, ['-e', 'f']).args).toEqual(['/x/cli.js', '-e', 'f', '-p', 'hi'])
    const native = { command: '/x/claude', args: ['-p', 'hi'], env: {}, cwd: '/' }
    expect(withLeadingFlags(native, ['--a']).args).toEqual(['--a', '-p', 'hi'])
  })

  it('the Pi extension embeds endpoint values as JSON literals, never as code', () => {
    const evil: BridgeEndpoint = { kind: 'http', url: "http://127.0.0.1:1/mcp'); process.exit(9); ('" }
    const src = piBridgeSource(evil, { kind: 'node_modules', client: '/c.js', stdio: '/s.js', http: '/h.js' })
    expect(src).toContain(`const ENDPOINT = ${JSON.stringify(evil)}`)
    expect(src.split('\n').filter((l) => l.includes('process.exit'))).toHaveLength(1)
  })
})
