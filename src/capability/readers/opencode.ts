import type { ConfiguredCapabilities } from '../../records/capabilities.js'
import { fileUnknown, readConfigFile } from '../config-file.js'
import { allUnknown, type CapabilityInput, known, obj, unknown } from '../facts.js'

const SDK_ROUTE: Record<string, string> = {
  '@ai-sdk/openai-compatible': 'chat',
  '@ai-sdk/openai': 'responses',
  '@ai-sdk/anthropic': 'anthropic',
  '@ai-sdk/google': 'gemini',
}

/**
 * OpenCode: the file OPENCODE_CONFIG names (default `~/.config/opencode/opencode.json`): `tools`
 * (a name → on/off map), `mcp`, `compaction.auto`, `permission`, `agent.build.steps` (or the older
 * `maxSteps`) and the provider's SDK package. Skills, retries and a browser are not in that file.
 */
export async function readOpencodeCapabilities(input: CapabilityInput): Promise<ConfiguredCapabilities> {
  const caps = allUnknown('not in the OpenCode config file')
  const file = await readConfigFile(input.home, input.env.OPENCODE_CONFIG ?? '.config/opencode/opencode.json')
  if (file.state !== 'read') {
    const why = fileUnknown(file, 'the configuration')
    return { ...allUnknown(why), request_routes: known<'request_routes'>([input.api], "the cell's wire API") }
  }
  const doc = file.doc
  const at = (key: string) => `${file.name} ${key}`

  const tools = obj(doc.tools)
  if (tools) {
    const on = Object.keys(tools).filter((k) => tools[k] === true)
    const off = Object.keys(tools).filter((k) => tools[k] === false)
    caps.tools =
      on.length > 0
        ? known<'tools'>(on.sort(), at('tools'))
        : unknown<'tools'>(`${at('tools')} turns none on by name`)
    caps.disabled_tools = known<'disabled_tools'>(off.sort(), at('tools'))
  } else {
    caps.tools = unknown<'tools'>(
      `${file.name} has no tools map: OpenCode's default set (see the tools the proxy saw)`,
    )
    caps.disabled_tools = known<'disabled_tools'>([], `${file.name} turns no tool off`)
  }

  const mcp = obj(doc.mcp)
  caps.mcp_servers = known<'mcp_servers'>(
    Object.keys(mcp ?? {})
      .filter((k) => obj(mcp?.[k])?.enabled !== false)
      .sort(),
    at('mcp'),
  )

  const compaction = obj(doc.compaction)
  caps.compaction =
    typeof compaction?.auto === 'boolean'
      ? known<'compaction'>(compaction.auto, at('compaction.auto'))
      : unknown<'compaction'>(fileUnknown(file, 'compaction.auto'))

  const permission = doc.permission
  if (typeof permission === 'string')
    caps.permission_mode = known<'permission_mode'>(permission, at('permission'))
  else if (obj(permission)) {
    const p = obj(permission) ?? {}
    const parts = Object.keys(p)
      .sort()
      .map((k) => `${k} ${typeof p[k] === 'string' ? p[k] : 'rules'}`)
    caps.permission_mode = known<'permission_mode'>(parts.join(', '), at('permission'))
  } else caps.permission_mode = unknown<'permission_mode'>(fileUnknown(file, 'permission'))

  const build = obj(obj(doc.agent)?.build)
  const steps = build?.steps ?? build?.maxSteps
  caps.iteration_limit =
    typeof steps === 'number' && Number.isSafeInteger(steps) && steps > 0
      ? known<'iteration_limit'>(steps, at('agent.build.steps'))
      : unknown<'iteration_limit'>(fileUnknown(file, 'agent.build.steps'))

  const sdks = Object.values(obj(doc.provider) ?? {})
    .map((p) => obj(p)?.npm)
    .filter((n): n is string => typeof n === 'string')
  const routes = [...new Set(sdks.map((n) => SDK_ROUTE[n] ?? n))].sort()
  caps.request_routes =
    routes.length > 0
      ? known<'request_routes'>(routes, at('provider[].npm'))
      : unknown<'request_routes'>(fileUnknown(file, 'provider[].npm'))
  return caps
}
