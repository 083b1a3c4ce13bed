import path from 'node:path'
import type { ConfiguredCapabilities } from '../../records/capabilities.js'
import { fileUnknown, readConfigFile } from '../config-file.js'
import {
  allUnknown,
  type CapabilityInput,
  flagValue,
  flagValues,
  hasFlag,
  known,
  nameList,
  obj,
  positiveInt,
  unknown,
} from '../facts.js'
import { skillFolders } from '../skills.js'

/**
 * Claude Code: `$CLAUDE_CONFIG_DIR/settings.json` (permissions), its arguments (`--allowedTools`,
 * `--disallowedTools`, `--permission-mode`, `--dangerously-skip-permissions`, `--max-turns`,
 * `--mcp-config` files) and named switches in its environment (`DISABLE_AUTO_COMPACT`,
 * `CLAUDE_CODE_MAX_RETRIES`), and the skill folders of the config folder and the workspace. A browser
 * is not read.
 */
export async function readClaudeCodeCapabilities(input: CapabilityInput): Promise<ConfiguredCapabilities> {
  const caps = allUnknown('not read from Claude Code settings or arguments')
  const { args, env } = input
  const configDir = env.CLAUDE_CONFIG_DIR ?? `${input.home}/.claude`
  const settings = await readConfigFile(input.home, `${configDir}/settings.json`)

  const allowed = flagValues(args, ['--allowedTools', '--allowed-tools'])
  caps.tools =
    allowed.length > 0
      ? known<'tools'>(nameList(allowed.join(',')), '--allowedTools')
      : unknown<'tools'>("no --allowedTools: Claude Code's default set (see the tools the proxy saw)")
  const denied = flagValues(args, ['--disallowedTools', '--disallowed-tools'])
  const settingsDeny = settings.state === 'read' ? obj(settings.doc.permissions)?.deny : undefined
  const deny = [
    ...denied,
    ...(Array.isArray(settingsDeny) ? settingsDeny.filter((d) => typeof d === 'string') : []),
  ]
  caps.disabled_tools =
    settings.state === 'read' || denied.length > 0
      ? known<'disabled_tools'>(nameList(deny.join(',')), '--disallowedTools and settings permissions.deny')
      : unknown<'disabled_tools'>(fileUnknown(settings, 'permissions.deny'))

  const mode = flagValue(args, ['--permission-mode'])
  const settingsMode = settings.state === 'read' ? obj(settings.doc.permissions)?.defaultMode : undefined
  if (hasFlag(args, ['--dangerously-skip-permissions']))
    caps.permission_mode = known<'permission_mode'>('bypassPermissions', '--dangerously-skip-permissions')
  else if (mode) caps.permission_mode = known<'permission_mode'>(mode, '--permission-mode')
  else if (typeof settingsMode === 'string')
    caps.permission_mode = known<'permission_mode'>(settingsMode, `${settings.name} permissions.defaultMode`)
  else caps.permission_mode = unknown<'permission_mode'>(fileUnknown(settings, 'permissions.defaultMode'))

  const turns = flagValue(args, ['--max-turns'])
  const maxTurns = positiveInt(turns)
  caps.iteration_limit =
    maxTurns !== null
      ? known<'iteration_limit'>(maxTurns, '--max-turns')
      : unknown<'iteration_limit'>(turns === null ? 'no --max-turns' : `--max-turns ${turns} is not a number`)

  // --mcp-config takes one or more files (or JSON text); each names its servers under mcpServers.
  const mcpArgs = mcpConfigValues(args)
  if (mcpArgs.length === 0) {
    caps.mcp_servers = hasFlag(args, ['--strict-mcp-config'])
      ? known<'mcp_servers'>([], '--strict-mcp-config without --mcp-config')
      : unknown<'mcp_servers'>('no --mcp-config: user and project .mcp.json not read')
  } else {
    const names: string[] = []
    let unreadable: string | null = null
    for (const v of mcpArgs) {
      const doc = v.trim().startsWith('{') ? parseJson(v) : await readConfigFile(input.home, v)
      if (doc.state !== 'read') unreadable ??= fileUnknown(doc, 'mcpServers')
      else names.push(...Object.keys(obj(doc.doc.mcpServers) ?? {}))
    }
    const strict = hasFlag(args, ['--strict-mcp-config'])
    caps.mcp_servers =
      unreadable !== null
        ? unknown<'mcp_servers'>(unreadable)
        : strict
          ? known<'mcp_servers'>([...new Set(names)].sort(), '--mcp-config with --strict-mcp-config')
          : unknown<'mcp_servers'>(
              '--mcp-config without --strict-mcp-config: user and project servers not read',
            )
  }

  if (env.DISABLE_AUTO_COMPACT !== undefined || env.DISABLE_COMPACT !== undefined) {
    const on = !(truthy(env.DISABLE_AUTO_COMPACT) || truthy(env.DISABLE_COMPACT))
    caps.compaction = known<'compaction'>(on, 'DISABLE_AUTO_COMPACT / DISABLE_COMPACT')
  } else caps.compaction = unknown<'compaction'>('no DISABLE_AUTO_COMPACT: Claude Code decides (not read)')
  const retries = env.CLAUDE_CODE_MAX_RETRIES
  caps.retry =
    retries !== undefined && /^\d+$/.test(retries)
      ? known<'retry'>(Number(retries) === 0 ? 'off' : `max ${Number(retries)}`, 'CLAUDE_CODE_MAX_RETRIES')
      : unknown<'retry'>('no CLAUDE_CODE_MAX_RETRIES: the SDK default applies (not read)')
  caps.skills = await claudeSkills(input, configDir)
  caps.request_routes = known<'request_routes'>(['anthropic'], 'ANTHROPIC_BASE_URL (Messages API)')
  return caps
}

/**
 * Skills Claude Code loads: `$CLAUDE_CONFIG_DIR/skills/<name>/SKILL.md` and the workspace's
 * `.claude/skills/<name>/SKILL.md` (plugins are not installed in an attempt's fresh config folder).
 */
async function claudeSkills(
  input: CapabilityInput,
  configDir: string,
): Promise<ConfiguredCapabilities['skills']> {
  const rel = path.relative(input.home, configDir).split(path.sep).join('/')
  if (rel.startsWith('..') || path.isAbsolute(rel))
    return unknown<'skills'>('CLAUDE_CONFIG_DIR outside the home: skills not read')
  const places: [string, string][] = [[input.home, `${rel}/skills`]]
  if (input.workspace) places.push([input.workspace, '.claude/skills'])
  else return unknown<'skills'>('the workspace was not given: project skills not read')
  const names: string[] = []
  for (const [root, folder] of places) {
    const got = await skillFolders(root, folder)
    if (got === 'absent') continue
    if ('refused' in got) return unknown<'skills'>(`${folder}: ${got.refused}, not followed`)
    names.push(...got.names)
  }
  return known<'skills'>([...new Set(names)].sort(), `${rel}/skills and the workspace's .claude/skills`)
}

const truthy = (v: string | undefined) => v !== undefined && /^(1|true|yes)$/i.test(v.trim())

function parseJson(text: string) {
  try {
    const doc = obj(JSON.parse(text))
    return doc
      ? ({ state: 'read', doc, name: '--mcp-config' } as const)
      : ({ state: 'unreadable', name: '--mcp-config', why: 'not an object' } as const)
  } catch {
    return { state: 'unreadable', name: '--mcp-config', why: 'not JSON' } as const
  }
}

/** The values after `--mcp-config` up to the next option (it takes several). */
function mcpConfigValues(args: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string
    if (a.startsWith('--mcp-config=')) out.push(a.slice('--mcp-config='.length))
    else if (a === '--mcp-config') {
      while (i + 1 < args.length && !(args[i + 1] as string).startsWith('-')) out.push(args[++i] as string)
    }
  }
  return out
}
