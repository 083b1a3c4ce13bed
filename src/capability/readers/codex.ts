import type { ConfiguredCapabilities } from '../../records/capabilities.js'
import { fileUnknown, readConfigFile } from '../config-file.js'
import { allUnknown, type CapabilityInput, hasFlag, known, obj, unknown } from '../facts.js'

/**
 * Codex: `$CODEX_HOME/config.toml` (approval and sandbox policy, the provider's wire API and retry
 * counts, `mcp_servers`, `model_auto_compact_token_limit`, `tools.web_search`) and
 * `--dangerously-bypass-approvals-and-sandbox`. Skills and an iteration limit are not in that file.
 */
export async function readCodexCapabilities(input: CapabilityInput): Promise<ConfiguredCapabilities> {
  const caps = allUnknown('not in the Codex config file')
  const codexHome = input.env.CODEX_HOME ?? `${input.home}/.codex`
  const file = await readConfigFile(input.home, `${codexHome}/config.toml`)
  const bypass = hasFlag(input.args, ['--dangerously-bypass-approvals-and-sandbox', '--yolo'])
  if (file.state !== 'read') {
    const out = allUnknown(fileUnknown(file, 'the configuration'))
    if (bypass)
      out.permission_mode = known<'permission_mode'>(
        'bypass approvals and sandbox',
        '--dangerously-bypass-approvals-and-sandbox',
      )
    return out
  }
  const doc = file.doc
  const at = (key: string) => `${file.name} ${key}`

  caps.mcp_servers = known<'mcp_servers'>(Object.keys(obj(doc.mcp_servers) ?? {}).sort(), at('mcp_servers'))

  const limit = doc.model_auto_compact_token_limit
  caps.compaction =
    typeof limit === 'number' || typeof limit === 'bigint'
      ? known<'compaction'>(Number(limit) > 0, at('model_auto_compact_token_limit'))
      : unknown<'compaction'>(fileUnknown(file, 'model_auto_compact_token_limit'))

  const providerId = typeof doc.model_provider === 'string' ? doc.model_provider : null
  const provider = providerId ? obj(obj(doc.model_providers)?.[providerId]) : null
  if (provider) {
    const req = provider.request_max_retries
    const stream = provider.stream_max_retries
    if (req !== undefined || stream !== undefined) {
      const n = (v: unknown) => (v === undefined ? 'default' : String(v))
      const off = Number(req) === 0 && Number(stream) === 0
      caps.retry = known<'retry'>(
        off ? 'off' : `request ${n(req)}, stream ${n(stream)}`,
        at(`model_providers.${providerId}.*_max_retries`),
      )
    } else caps.retry = unknown<'retry'>(fileUnknown(file, 'the provider retry counts'))
    caps.request_routes =
      typeof provider.wire_api === 'string'
        ? known<'request_routes'>([provider.wire_api], at(`model_providers.${providerId}.wire_api`))
        : unknown<'request_routes'>(fileUnknown(file, 'wire_api'))
  } else {
    caps.retry = unknown<'retry'>(fileUnknown(file, 'model_provider'))
    caps.request_routes = unknown<'request_routes'>(fileUnknown(file, 'model_provider'))
  }

  if (bypass)
    caps.permission_mode = known<'permission_mode'>(
      'bypass approvals and sandbox',
      '--dangerously-bypass-approvals-and-sandbox',
    )
  else if (typeof doc.approval_policy === 'string') {
    const sandbox = typeof doc.sandbox_mode === 'string' ? `, sandbox ${doc.sandbox_mode}` : ''
    caps.permission_mode = known<'permission_mode'>(
      `approval ${doc.approval_policy}${sandbox}`,
      at('approval_policy'),
    )
  } else caps.permission_mode = unknown<'permission_mode'>(fileUnknown(file, 'approval_policy'))

  const webSearch = obj(doc.tools)?.web_search
  caps.browser =
    typeof webSearch === 'boolean'
      ? known<'browser'>(webSearch, at('tools.web_search'))
      : unknown<'browser'>(fileUnknown(file, 'tools.web_search'))
  return caps
}
