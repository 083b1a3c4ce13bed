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
  unknown,
} from '../facts.js'

/**
 * Pi: `~/.pi/agent/settings.json` (compaction, retry), `models.json` (the provider's API) and its
 * arguments (`--tools`, `--no-tools`, `--skill`, `--no-skills`). Pi has no MCP client and asks no
 * permissions; it has no iteration limit or browser setting to read.
 */
export async function readPiCapabilities(input: CapabilityInput): Promise<ConfiguredCapabilities> {
  const caps = allUnknown('not a Pi setting')
  const { args } = input
  const settings = await readConfigFile(input.home, '.pi/agent/settings.json')
  const models = await readConfigFile(input.home, '.pi/agent/models.json')

  if (hasFlag(args, ['--no-tools', '-nt'])) caps.tools = known<'tools'>([], '--no-tools')
  else {
    const list = flagValue(args, ['--tools', '-t'])
    caps.tools =
      list !== null
        ? known<'tools'>(nameList(list), '--tools')
        : unknown<'tools'>("no --tools: Pi's built-in default set (see the tools the proxy saw)")
  }
  caps.disabled_tools = hasFlag(args, ['--no-builtin-tools', '-nbt'])
    ? known<'disabled_tools'>(['built-in tools'], '--no-builtin-tools')
    : unknown<'disabled_tools'>('no tool is turned off by argument; Pi has no deny list to read')
  if (hasFlag(args, ['--no-skills', '-ns'])) caps.skills = known<'skills'>([], '--no-skills')
  else {
    const skills = flagValues(args, ['--skill']).map((p) => p.split('/').filter(Boolean).pop() ?? p)
    caps.skills =
      skills.length > 0
        ? known<'skills'>([...new Set(skills)].sort(), '--skill')
        : unknown<'skills'>('skills discovered by Pi at run time (not read)')
  }
  caps.mcp_servers = known<'mcp_servers'>([], 'Pi has no MCP client (bridge tools arrive as an extension)')
  caps.permission_mode = known<'permission_mode'>('none', 'Pi asks no permissions')

  if (settings.state === 'read') {
    const compaction = obj(settings.doc.compaction)
    caps.compaction =
      typeof compaction?.enabled === 'boolean'
        ? known<'compaction'>(compaction.enabled, `${settings.name} compaction.enabled`)
        : unknown<'compaction'>(fileUnknown(settings, 'compaction.enabled'))
    const retry = obj(settings.doc.retry)
    if (retry?.enabled === false) caps.retry = known<'retry'>('off', `${settings.name} retry.enabled`)
    else if (retry?.enabled === true) {
      const max = typeof retry.maxRetries === 'number' ? `max ${retry.maxRetries}` : 'max unstated'
      caps.retry = known<'retry'>(`on, ${max}`, `${settings.name} retry`)
    } else caps.retry = unknown<'retry'>(fileUnknown(settings, 'retry.enabled'))
  } else {
    caps.compaction = unknown<'compaction'>(fileUnknown(settings, 'compaction'))
    caps.retry = unknown<'retry'>(fileUnknown(settings, 'retry'))
  }

  const providers = models.state === 'read' ? obj(models.doc.providers) : null
  const apis = Object.values(providers ?? {})
    .map((p) => obj(p)?.api)
    .filter((a): a is string => typeof a === 'string')
  caps.request_routes =
    apis.length > 0
      ? known<'request_routes'>([...new Set(apis)].sort(), `${models.name} providers[].api`)
      : unknown<'request_routes'>(fileUnknown(models, 'providers[].api'))
  return caps
}
