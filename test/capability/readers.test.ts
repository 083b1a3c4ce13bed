import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readConfiguredCapabilities } from '../../src/capability/readers/index.js'
import { claudeCodeAdapter } from '../../src/harnesses/claude-code.js'
import { codexAdapter } from '../../src/harnesses/codex.js'
import type { AttemptContext, HarnessAdapter, Invocation } from '../../src/harnesses/contract.js'
import { wireBridge } from '../../src/harnesses/mcp.js'
import { opencodeAdapter } from '../../src/harnesses/opencode.js'
import { piAdapter } from '../../src/harnesses/pi.js'
import type { WireApi } from '../../src/manifest/harness-names.js'
import type { ConfiguredCapabilities } from '../../src/records/capabilities.js'
import { type AttemptDirs, attemptDirs, cleanup, fakeInstalled, makeCtx } from '../harnesses/helpers.js'

let dirs: AttemptDirs
beforeEach(async () => {
  dirs = await attemptDirs()
})
afterEach(async () => {
  await cleanup(dirs.base)
})

const BRIDGE = {
  kind: 'stdio' as const,
  command: '/usr/bin/node',
  args: ['/opt/bridge.js', '--state', '/tmp/s'],
}

/** Prepare the real adapter (its real config files in the home), optionally wire the bridge, read capabilities. */
async function prepared(
  adapter: HarnessAdapter,
  over: Partial<AttemptContext> = {},
  bridge = false,
): Promise<{ caps: ConfiguredCapabilities; inv: Invocation }> {
  const ctx = makeCtx(dirs, over)
  let inv = await adapter.prepare(fakeInstalled(adapter.name, '/cache/bin/harness'), ctx)
  if (bridge) inv = (await wireBridge(adapter.name, inv, ctx, BRIDGE)).invocation
  const caps = await readConfiguredCapabilities(adapter.name, {
    home: ctx.home,
    workspace: ctx.workspace,
    args: inv.args.filter((a) => a !== ctx.prompt),
    env: inv.env,
    api: ctx.api,
  })
  return { caps, inv }
}

const values = (c: ConfiguredCapabilities) =>
  Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v.value]))

describe('capabilities read from the configuration each adapter writes', () => {
  it('Pi: retry off from settings.json, the provider API from models.json, no MCP, compaction unknown', async () => {
    const { caps } = await prepared(piAdapter, { api: 'chat' as WireApi })
    expect(values(caps)).toEqual({
      tools: null,
      disabled_tools: null,
      skills: null,
      mcp_servers: [],
      compaction: null,
      retry: 'off',
      permission_mode: 'none',
      iteration_limit: null,
      browser: null,
      request_routes: ['openai-completions'],
    })
    expect(caps.retry.from).toBe('.pi/agent/settings.json retry.enabled')
    expect(caps.compaction.from).toBe('.pi/agent/settings.json does not set compaction.enabled')
    expect(caps.tools.from).toContain('no --tools')
  })

  it("Pi: a cell's --tools, --no-skills and its own settings.json (compaction on, retries 5) are read", async () => {
    const settings = JSON.stringify({
      compaction: { enabled: true },
      retry: { enabled: true, maxRetries: 5 },
    })
    const { caps } = await prepared(piAdapter, {
      api: 'anthropic' as WireApi,
      config: {
        args: ['--tools', 'read,bash,grep', '--no-skills'],
        env: {},
        pass_env: [],
        files: { '.pi/agent/settings.json': settings },
      },
    })
    expect(caps.tools.value).toEqual(['bash', 'grep', 'read'])
    expect(caps.skills).toEqual({ value: [], from: '--no-skills' })
    expect(caps.compaction).toEqual({ value: true, from: '.pi/agent/settings.json compaction.enabled' })
    expect(caps.retry.value).toBe('on, max 5')
    expect(caps.request_routes.value).toEqual(['anthropic-messages'])
  })

  it('Pi: the prompt is never read as an option even when it spells one', async () => {
    const { caps } = await prepared(piAdapter, { prompt: '--no-tools' })
    expect(caps.tools.value).toBeNull()
  })

  it('OpenCode: permissions from opencode.json, the bridge as an MCP server, compaction unknown', async () => {
    const { caps } = await prepared(opencodeAdapter, { api: 'chat' as WireApi }, true)
    expect(values(caps)).toEqual({
      tools: null,
      disabled_tools: [],
      skills: null,
      mcp_servers: ['bridge'],
      compaction: null,
      retry: null,
      permission_mode: 'bash allow, edit allow, webfetch allow',
      iteration_limit: null,
      browser: null,
      request_routes: ['chat'],
    })
    expect(caps.mcp_servers.from).toBe('.config/opencode/opencode.json mcp')
  })

  it('OpenCode: an unreadable config file makes every capability unknown, with where and why', async () => {
    const ctx = makeCtx(dirs)
    const inv = await opencodeAdapter.prepare(fakeInstalled('opencode', '/cache/bin/opencode'), ctx)
    await writeFile(path.join(dirs.home, '.config/opencode/opencode.json'), '{ "permission": ')
    const caps = await readConfiguredCapabilities('opencode', {
      home: ctx.home,
      args: inv.args,
      env: inv.env,
      api: 'chat',
    })
    expect(caps.mcp_servers.value).toBeNull()
    expect(caps.permission_mode.value).toBeNull()
    expect(caps.permission_mode.from).toMatch(/^\.config\/opencode\/opencode\.json unreadable \(/)
    expect(caps.request_routes.value).toEqual(['chat'])
  })

  it('a config file that is not JSON is unknown with its line and column, never a window of its text', async () => {
    const ctx = makeCtx(dirs)
    const inv = await opencodeAdapter.prepare(fakeInstalled('opencode', '/cache/bin/opencode'), ctx)
    // V8's own message for this text quotes it: `Unexpected token 's', "{"apiKey": sk-live-SE"... is not valid JSON`
    await writeFile(
      path.join(dirs.home, '.config/opencode/opencode.json'),
      '{\n  "apiKey": sk-live-SECRET-0123456789\n}\n',
    )
    const caps = await readConfiguredCapabilities('opencode', {
      home: ctx.home,
      args: inv.args,
      env: inv.env,
      api: 'chat',
    })
    expect(caps.permission_mode.value).toBeNull()
    expect(caps.permission_mode.from).toMatch(
      /^\.config\/opencode\/opencode\.json unreadable \(not valid JSON at line 2, column 13: /,
    )
    for (const f of Object.values(caps)) {
      expect(f.from).not.toContain('sk-live')
      expect(f.from).not.toContain('apiKey')
    }
  })

  it('Codex: config.toml gives approval bypass, retries off, the responses route and the bridge server', async () => {
    const { caps } = await prepared(codexAdapter, { api: 'responses' as WireApi }, true)
    expect(values(caps)).toEqual({
      tools: null,
      disabled_tools: null,
      skills: null,
      mcp_servers: ['bridge'],
      compaction: null,
      retry: 'off',
      permission_mode: 'bypass approvals and sandbox',
      iteration_limit: null,
      browser: null,
      request_routes: ['responses'],
    })
    expect(caps.retry.from).toBe('.codex/config.toml model_providers.hw.*_max_retries')
  })

  it("Codex: a cell's config.toml with auto-compaction and web search is read as such", async () => {
    const toml = [
      'model = "m"',
      'model_provider = "hw"',
      'approval_policy = "on-request"',
      'sandbox_mode = "workspace-write"',
      'model_auto_compact_token_limit = 120000',
      '[tools]',
      'web_search = true',
      '[model_providers.hw]',
      'wire_api = "responses"',
      'request_max_retries = 4',
      '',
    ].join('\n')
    const ctx = makeCtx(dirs, {
      config: { args: [], env: {}, pass_env: [], files: { '.codex/config.toml': toml } },
    })
    const inv = await codexAdapter.prepare(fakeInstalled('codex', '/cache/bin/codex'), ctx)
    const caps = await readConfiguredCapabilities('codex', {
      home: ctx.home,
      // without the bypass flag: the policy in the file applies
      args: inv.args.filter((a) => a !== ctx.prompt && a !== '--dangerously-bypass-approvals-and-sandbox'),
      env: inv.env,
      api: 'responses',
    })
    expect(caps.compaction.value).toBe(true)
    expect(caps.browser.value).toBe(true)
    expect(caps.retry.value).toBe('request 4, stream default')
    expect(caps.permission_mode.value).toBe('approval on-request, sandbox workspace-write')
  })

  it('Claude Code: bypassPermissions, --max-turns and the strict MCP config from the bridge', async () => {
    const { caps } = await prepared(
      claudeCodeAdapter,
      {
        api: 'anthropic' as WireApi,
        config: {
          args: ['--max-turns', '40', '--disallowedTools', 'WebFetch,WebSearch'],
          env: {},
          pass_env: [],
          files: {},
        },
      },
      true,
    )
    expect(values(caps)).toEqual({
      tools: null,
      disabled_tools: ['WebFetch', 'WebSearch'],
      skills: [],
      mcp_servers: ['bridge'],
      compaction: null,
      retry: null,
      permission_mode: 'bypassPermissions',
      iteration_limit: 40,
      browser: null,
      request_routes: ['anthropic'],
    })
    expect(caps.mcp_servers.from).toBe('--mcp-config with --strict-mcp-config')
  })

  it("Claude Code: skills from the cell's files in the config folder and from the workspace, by name only", async () => {
    await mkdir(path.join(dirs.workspace, '.claude/skills/lint'), { recursive: true })
    await writeFile(path.join(dirs.workspace, '.claude/skills/lint/SKILL.md'), '---\nname: lint\n---\n')
    // A folder without SKILL.md is not a skill
    await mkdir(path.join(dirs.workspace, '.claude/skills/notes'), { recursive: true })
    const { caps } = await prepared(claudeCodeAdapter, {
      config: {
        args: [],
        env: {},
        pass_env: [],
        files: { '.claude/skills/review/SKILL.md': '---\nname: review\n---\nReview the diff.\n' },
      },
    })
    expect(caps.skills).toEqual({
      value: ['lint', 'review'],
      from: ".claude/skills and the workspace's .claude/skills",
    })
  })

  it("Claude Code: a workspace's skills folder that is a symbolic link is not followed: skills unknown", async () => {
    const elsewhere = path.join(dirs.base, 'elsewhere')
    await mkdir(path.join(elsewhere, 'steal'), { recursive: true })
    await writeFile(path.join(elsewhere, 'steal/SKILL.md'), 'x')
    await mkdir(path.join(dirs.workspace, '.claude'), { recursive: true })
    await symlink(elsewhere, path.join(dirs.workspace, '.claude/skills'))
    const { caps } = await prepared(claudeCodeAdapter)
    expect(caps.skills).toEqual({
      value: null,
      from: '.claude/skills: .claude/skills is a symbolic link, not followed',
    })
  })

  it('Claude Code: a settings.json reached through a symbolic link is not read (unknown, never followed)', async () => {
    const ctx = makeCtx(dirs)
    const inv = await claudeCodeAdapter.prepare(fakeInstalled('claude-code', '/cache/bin/claude'), ctx)
    const outside = path.join(dirs.base, 'outside.json')
    await writeFile(outside, JSON.stringify({ permissions: { deny: ['Bash'] } }))
    const settings = path.join(dirs.home, '.claude/settings.json')
    await import('node:fs/promises').then((fs) => fs.rm(settings))
    await symlink(outside, settings)
    const caps = await readConfiguredCapabilities('claude-code', {
      home: ctx.home,
      args: inv.args.filter((a) => a !== ctx.prompt && a !== '--dangerously-skip-permissions'),
      env: inv.env,
      api: 'anthropic',
    })
    expect(caps.disabled_tools.value).toBeNull()
    expect(caps.disabled_tools.from).toMatch(/^\.claude\/settings\.json unreadable/)
    expect(caps.permission_mode.value).toBeNull()
  })

  it('a harness without a reader states every capability unknown but its wire API', async () => {
    await mkdir(path.join(dirs.home, '.gemini'), { recursive: true })
    const caps = await readConfiguredCapabilities('gemini-cli', {
      home: dirs.home,
      args: [],
      env: {},
      api: 'gemini',
    })
    expect(caps.compaction).toEqual({
      value: null,
      from: 'the gemini-cli adapter does not read its capabilities',
    })
    expect(caps.request_routes.value).toEqual(['gemini'])
  })
})
