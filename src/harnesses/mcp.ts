import path from 'node:path'
import { parse as parseToml, stringify as toToml } from 'smol-toml'
import type { HarnessName } from '../manifest/harness-names.js'
import { readBack } from '../sandbox/read-back.js'
import type { BridgeEndpoint } from './bridge-endpoint.js'
import type { AttemptContext, Invocation } from './contract.js'
import { jsonFile, writeInside } from './files.js'
import { writePiBridgeExtension } from './pi-bridge.js'

/** The MCP server name every recipe registers; the model sees it inside each harness's tool names. */
export const BRIDGE_SERVER = 'bridge'

/** Seconds a harness waits for the bridge to start before giving up on it (Codex, Claude Code). */
export const MCP_STARTUP_TIMEOUT_S = 60

/**
 * How a cell reaches the tool-bridge, recorded per attempt: the harness's own MCP client over stdio
 * or Streamable HTTP, or (Pi, which has no MCP by design) a small extension of ours that registers the
 * bridge's tools as native tools.
 */
export type BridgeTransport = 'mcp-stdio' | 'mcp-http' | 'pi-extension'

/** A bridge tool as the model sees it in one harness: a name, and for Codex a Responses namespace. */
export interface SeenToolName {
  name: string
  namespace?: string
}

/**
 * The verified way (rig.md §2) one harness loads the bridge headless: what it writes into the attempt's
 * isolated home, the flags and variables it adds, and how it renames the bridge's tools.
 */
export interface McpRecipe {
  /** `mcp-stdio` / `mcp-http`, or `pi-extension` for a harness without MCP. */
  transport(endpoint: BridgeEndpoint): BridgeTransport
  /** The name the model sees for bridge tool `tool` (the bridge itself always receives `tool`). */
  toolName(tool: string): SeenToolName
  /**
   * Wire the bridge into the invocation the adapter prepared: config files are written (or merged)
   * under `ctx.home`, flags and variables added. Never touches files outside the home.
   */
  wire(inv: Invocation, ctx: AttemptContext, endpoint: BridgeEndpoint): Promise<Invocation>
}

/**
 * The invocation with `flags` put before the harness's own arguments: after the entry script when the
 * harness is a JS file run by Node (`node cli.js …`, see npm-harness.ts `launch`), else first.
 */
export function withLeadingFlags(inv: Invocation, flags: string[]): Invocation {
  const script = inv.command === process.execPath && /\.(c|m)?js$/.test(inv.args[0] ?? '') ? 1 : 0
  return { ...inv, args: [...inv.args.slice(0, script), ...flags, ...inv.args.slice(script)] }
}

const mcpTransport = (e: BridgeEndpoint): BridgeTransport => (e.kind === 'stdio' ? 'mcp-stdio' : 'mcp-http')

/**
 * Read a JSON object file the adapter wrote under `home` (or `{}` when absent), for merging a server
 * entry in; a harness's earlier turn may have replaced it, so never through a symbolic link (readBack).
 */
async function readJsonObject(file: string, home: string): Promise<Record<string, unknown>> {
  const text = await readBack(file, home).catch(() => null)
  if (text === null) return {}
  const v: unknown = JSON.parse(text)
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
}

async function mergeJson(
  home: string,
  rel: string,
  key: string,
  entry: Record<string, unknown>,
): Promise<string> {
  const file = path.join(home, rel)
  const doc = await readJsonObject(file, home)
  const servers = (doc[key] && typeof doc[key] === 'object' ? doc[key] : {}) as Record<string, unknown>
  doc[key] = { ...servers, [BRIDGE_SERVER]: entry }
  return writeInside(home, rel, jsonFile(doc))
}

/** `{command, args}` or the HTTP form under `urlKey` (`url`, `httpUrl`), plus the harness's extras. */
function serverEntry(
  e: BridgeEndpoint,
  http: (url: string) => Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return e.kind === 'stdio' ? { command: e.command, args: e.args, ...extra } : { ...http(e.url), ...extra }
}

/**
 * Claude Code 2.1.332 (rig.md §2.1): `--mcp-config <file> --strict-mcp-config` (strict: no user or
 * project `.mcp.json`), placed first because `--mcp-config` takes several values; ENABLE_TOOL_SEARCH=false
 * so the bridge's tools are inline, not deferred behind ToolSearch; MCP_TIMEOUT (its documented server
 * start limit, ms) raised for loaded runners. Permissions come from the adapter's
 * `--dangerously-skip-permissions`.
 */
const claudeRecipe: McpRecipe = {
  transport: mcpTransport,
  toolName: (tool) => ({ name: `mcp__${BRIDGE_SERVER}__${tool}` }),
  async wire(inv, ctx, e) {
    const file = await writeInside(
      ctx.home,
      '.claude/hw-mcp.json',
      jsonFile({ mcpServers: { [BRIDGE_SERVER]: serverEntry(e, (url) => ({ type: 'http', url })) } }),
    )
    const flagged = withLeadingFlags(inv, ['--mcp-config', file, '--strict-mcp-config'])
    return {
      ...flagged,
      env: { ...inv.env, ENABLE_TOOL_SEARCH: 'false', MCP_TIMEOUT: String(MCP_STARTUP_TIMEOUT_S * 1000) },
    }
  },
}

/**
 * Codex 0.171.0 (rig.md §2.2): `[mcp_servers.bridge]` appended to `$CODEX_HOME/config.toml`; the model
 * sees one Responses namespace `mcp__bridge` holding each tool by its own name.
 */
const codexRecipe: McpRecipe = {
  transport: mcpTransport,
  toolName: (tool) => ({ name: tool, namespace: `mcp__${BRIDGE_SERVER}` }),
  async wire(inv, ctx, e) {
    const file = path.join(ctx.home, '.codex', 'config.toml')
    const text = await readBack(file, ctx.home).catch(() => '')
    const doc = parseToml(text) as Record<string, unknown>
    const servers = (doc.mcp_servers ?? {}) as Record<string, unknown>
    // Codex 0.171 treats an MCP server as optional by default and sends the first request once a short
    // grace period is over, without the tools of a server still starting (seen with the bridge started
    // from source on a busy 2-core runner). `required = true` makes the session wait for it (and fail
    // if it cannot start, rather than run the task without its tools).
    doc.mcp_optional_startup_grace_ms = MCP_STARTUP_TIMEOUT_S * 1000
    doc.mcp_servers = {
      ...servers,
      [BRIDGE_SERVER]: serverEntry(e, (url) => ({ url }), {
        required: true,
        startup_timeout_sec: MCP_STARTUP_TIMEOUT_S,
      }),
    }
    await writeInside(ctx.home, '.codex/config.toml', `${toToml(doc)}\n`)
    return inv
  },
}

/**
 * Gemini CLI 0.61.0 (rig.md §2.3): `mcpServers.bridge` in `~/.gemini/settings.json` with `trust:true`
 * (without it or `--yolo` the tools are left out of the request); HTTP as `httpUrl`. Tools are
 * `mcp_bridge_<tool>`; Gemini adds a `wait_for_previous` argument the bridge must ignore.
 */
const geminiRecipe: McpRecipe = {
  transport: mcpTransport,
  toolName: (tool) => ({ name: `mcp_${BRIDGE_SERVER}_${tool}` }),
  async wire(inv, ctx, e) {
    await mergeJson(
      ctx.home,
      '.gemini/settings.json',
      'mcpServers',
      serverEntry(e, (url) => ({ httpUrl: url }), { trust: true }),
    )
    return inv
  },
}

/**
 * Qwen Code 0.24.4 (rig.md §2.4): `mcpServers.bridge` in `$QWEN_HOME/settings.json` with
 * `alwaysLoadTools:true` (else the tools hide behind tool_search/tool_call) and `trust:true`.
 */
const qwenRecipe: McpRecipe = {
  transport: mcpTransport,
  toolName: (tool) => ({ name: `mcp__${BRIDGE_SERVER}__${tool}` }),
  async wire(inv, ctx, e) {
    await mergeJson(
      ctx.home,
      '.qwen/settings.json',
      'mcpServers',
      serverEntry(e, (url) => ({ httpUrl: url }), { alwaysLoadTools: true, trust: true }),
    )
    return inv
  },
}

/**
 * OpenCode 1.18.33 (rig.md §2.5): `mcp.bridge` in the OPENCODE_CONFIG file, `type:"local"` with the
 * command as one array, or `type:"remote"`; tools are `bridge_<tool>`; no permission entry needed.
 */
const opencodeRecipe: McpRecipe = {
  transport: mcpTransport,
  toolName: (tool) => ({ name: `${BRIDGE_SERVER}_${tool}` }),
  async wire(inv, ctx, e) {
    const entry =
      e.kind === 'stdio'
        ? { type: 'local', command: [e.command, ...e.args], enabled: true }
        : { type: 'remote', url: e.url, enabled: true }
    const rel = inv.env.OPENCODE_CONFIG
      ? path.relative(ctx.home, inv.env.OPENCODE_CONFIG)
      : '.config/opencode/opencode.json'
    await mergeJson(ctx.home, rel, 'mcp', entry)
    return inv
  },
}

/**
 * Copilot CLI 1.0.102 (rig.md §2.6): `--additional-mcp-config @<file>` with `tools:["*"]`; tools are
 * `bridge-<tool>` (a hyphen); the adapter's `--allow-all` grants them.
 */
const copilotRecipe: McpRecipe = {
  transport: mcpTransport,
  toolName: (tool) => ({ name: `${BRIDGE_SERVER}-${tool}` }),
  async wire(inv, ctx, e) {
    const entry =
      e.kind === 'stdio'
        ? { type: 'local', command: e.command, args: e.args, tools: ['*'] }
        : { type: 'http', url: e.url, tools: ['*'] }
    const file = await writeInside(
      ctx.home,
      '.copilot/hw-mcp.json',
      jsonFile({ mcpServers: { [BRIDGE_SERVER]: entry } }),
    )
    return withLeadingFlags(inv, ['--additional-mcp-config', `@${file}`])
  },
}

/**
 * Pi 0.73.1 has no MCP by design (rig.md §2.7). Our extension (pi-bridge.ts), loaded with `-e`,
 * connects an MCP client to the bridge and registers each bridge tool as `bridge_<tool>` (a bare name
 * would collide with Pi's own `bash` and `read`); it closes the client on `session_shutdown`.
 */
const piRecipe: McpRecipe = {
  transport: () => 'pi-extension',
  toolName: (tool) => ({ name: `${BRIDGE_SERVER}_${tool}` }),
  async wire(inv, ctx, e) {
    const ext = await writePiBridgeExtension(ctx.home, e)
    return withLeadingFlags(inv, ['-e', ext])
  },
}

/**
 * agentd (issue 15 §7): its own `--mcp <file>` flag, given an `mcpServers` file in the home. Tool names
 * are taken as agentd registers them, unprefixed (not verified against a real agentd: no release runs
 * here; the stand-in test checks the flag and the file).
 */
const agentdRecipe: McpRecipe = {
  transport: mcpTransport,
  toolName: (tool) => ({ name: tool }),
  async wire(inv, ctx, e) {
    const file = await writeInside(
      ctx.home,
      '.agentd/hw-mcp.json',
      jsonFile({ mcpServers: { [BRIDGE_SERVER]: serverEntry(e, (url) => ({ type: 'http', url })) } }),
    )
    return { ...inv, args: [...inv.args, '--mcp', file] }
  },
}

/**
 * The bridge recipe of every harness; null where the harness cannot load the bridge here, and
 * `validate` refuses such a cell for a bridge panel (`bridgeRefusal`).
 */
export const MCP_RECIPES: Record<HarnessName, McpRecipe | null> = {
  pi: piRecipe,
  opencode: opencodeRecipe,
  codex: codexRecipe,
  'claude-code': claudeRecipe,
  'gemini-cli': geminiRecipe,
  copilot: copilotRecipe,
  'qwen-code': qwenRecipe,
  openhands: null,
  hermes: null,
  'mini-swe-agent': null,
  agentd: agentdRecipe,
  command: null,
}

/** Why a harness cannot run a bridge panel, or null when it can (its recipe exists). */
export function bridgeRefusal(harness: HarnessName): string | null {
  if (MCP_RECIPES[harness]) return null
  if (harness === 'command') {
    return 'harness "command" runs an arbitrary program: Harness Watch cannot wire the tool-bridge into it'
  }
  return `harness "${harness}" has no verified way to load the tool-bridge (MCP) headless here`
}

/**
 * Wire the bridge into a prepared invocation for `harness`. Returns the new invocation and the
 * transport to record. Throws HwError-free plain Error only for a harness `bridgeRefusal` names.
 */
export async function wireBridge(
  harness: HarnessName,
  inv: Invocation,
  ctx: AttemptContext,
  endpoint: BridgeEndpoint,
): Promise<{ invocation: Invocation; transport: BridgeTransport }> {
  const recipe = MCP_RECIPES[harness]
  if (!recipe) throw new Error(bridgeRefusal(harness) ?? `no bridge recipe for ${harness}`)
  return { invocation: await recipe.wire(inv, ctx, endpoint), transport: recipe.transport(endpoint) }
}
