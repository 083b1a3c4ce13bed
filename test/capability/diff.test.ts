import { describe, expect, it } from 'vitest'
import { betweenCells, betweenRuns } from '../../src/capability/diff.js'
import { allUnknown, known } from '../../src/capability/facts.js'
import { summarizeCell } from '../../src/capability/summarize.js'
import type {
  CapabilityManifest,
  CellCapabilities,
  ObservedCapabilities,
} from '../../src/records/capabilities.js'

const tool = (name: string, hash: string) => ({ name, schema_sha256: [hash], requests: 3 })

function seen(
  tools: ReturnType<typeof tool>[],
  over: Partial<ObservedCapabilities> = {},
): ObservedCapabilities {
  return {
    requests: 3,
    requests_with_tools: 3,
    tools_named: true,
    tools,
    call_types: ['chat.completions'],
    ...over,
  }
}

function cell(
  id: string,
  harness: string,
  version: string | null,
  over: Partial<CellCapabilities> = {},
): CellCapabilities {
  return {
    cell_id: id,
    harness,
    harness_version: version,
    attempts: 2,
    configured: {
      ...allUnknown('not read'),
      mcp_servers: known<'mcp_servers'>([], 'opencode.json mcp'),
      compaction: known<'compaction'>(false, 'opencode.json compaction.auto'),
      permission_mode: known<'permission_mode'>('bash allow, edit allow', 'opencode.json permission'),
      request_routes: known<'request_routes'>(['chat'], 'opencode.json provider[].npm'),
    },
    observed: seen([
      tool('bash', 'aaaaaaaaaaaaaaaa'),
      tool('edit', 'bbbbbbbbbbbbbbbb'),
      tool('read', 'cccccccccccccccc'),
    ]),
    ...over,
  }
}

describe('capability differences, one line each', () => {
  it('between runs: added tools, a changed schema, compaction on, a new MCP server', () => {
    const before = cell('treatment', 'opencode', '1.18.33')
    const after = cell('treatment', 'opencode', '1.19.0', {
      configured: {
        ...before.configured,
        compaction: known<'compaction'>(true, 'opencode.json compaction.auto'),
        mcp_servers: known<'mcp_servers'>(['bridge'], 'opencode.json mcp'),
      },
      observed: seen([
        tool('bash', 'aaaaaaaaaaaaaaaa'),
        tool('edit', 'dddddddddddddddd'),
        tool('glob', '1111111111111111'),
        tool('grep', '2222222222222222'),
        tool('read', 'cccccccccccccccc'),
        tool('todowrite', '3333333333333333'),
      ]),
    })
    expect(betweenRuns([before], [after])).toEqual([
      'opencode 1.18.33 → 1.19.0 (cell treatment): +3 tools (glob, grep, todowrite), 1 tool schema changed (edit), +1 MCP server (bridge), compaction on',
    ])
  })

  it('unknown on either side is listed as unknown, never as a change', () => {
    const before = cell('b', 'opencode', '1.18.33')
    const after = cell('b', 'opencode', '1.18.33', {
      configured: { ...before.configured, compaction: { value: null, from: 'opencode.json unreadable' } },
      observed: null,
    })
    expect(betweenRuns([before], [after])).toEqual([
      'opencode 1.18.33 → 1.18.33 (cell b): no capability change seen; unknown on one side: tools, compaction',
    ])
    // Both unknown and nothing else different: no line at all
    expect(betweenRuns([after], [after])).toEqual([])
  })

  it('a version change alone still gets its line; a cell new this run gets none', () => {
    const before = cell('a', 'pi', '0.73.0')
    const after = cell('a', 'pi', '0.73.1')
    expect(betweenRuns([before], [after, cell('new', 'pi', '0.73.1')])).toEqual([
      'pi 0.73.0 → 0.73.1 (cell a): no capability change seen',
    ])
  })

  it('between cells: each cell against the baseline, with removed tools and a changed permission mode', () => {
    const base = cell('baseline', 'opencode', '1.18.33')
    const treat = cell('treatment', 'claude-code', '2.1.332', {
      configured: {
        ...base.configured,
        permission_mode: known<'permission_mode'>('bypassPermissions', '--dangerously-skip-permissions'),
        request_routes: known<'request_routes'>(['anthropic'], 'ANTHROPIC_BASE_URL'),
      },
      observed: seen([tool('Bash', 'eeeeeeeeeeeeeeee'), tool('read', 'cccccccccccccccc')], {
        call_types: ['messages'],
      }),
    })
    const same = cell('aa', 'opencode', '1.18.33')
    expect(betweenCells([base, treat, same], 'baseline')).toEqual([
      'baseline (opencode 1.18.33) → treatment (claude-code 2.1.332): +1 tool (Bash), −2 tools (bash, edit), permission mode bash allow, edit allow → bypassPermissions, request routes chat → anthropic, +1 call type (messages), −1 call type (chat.completions)',
    ])
  })

  it("configured tool lists are compared when the proxy's names are not whole", () => {
    const a = cell('a', 'pi', '0.73.1', {
      configured: { ...allUnknown('x'), tools: known<'tools'>(['bash', 'read'], '--tools') },
      observed: seen([], { tools_named: false }),
    })
    const b = cell('b', 'pi', '0.73.1', {
      configured: { ...allUnknown('x'), tools: known<'tools'>(['bash', 'grep', 'read'], '--tools') },
      observed: null,
    })
    expect(betweenCells([a, b], 'a')).toEqual(['a (pi 0.73.1) → b (pi 0.73.1): +1 tool (grep)'])
  })

  it('a cell summary keeps what every attempt states and marks what differs between attempts', () => {
    const m = (compaction: boolean, tools: string[]): CapabilityManifest => ({
      schema_version: 1,
      cell_id: 'c',
      harness: 'pi',
      harness_version: '0.73.1',
      model: 'glm-4.6',
      configured: {
        ...allUnknown('x'),
        compaction: known<'compaction'>(compaction, 'settings.json'),
        retry: known<'retry'>('off', 'settings.json'),
      },
      observed: seen(tools.map((t) => tool(t, 'aaaaaaaaaaaaaaaa'))),
    })
    const s = summarizeCell('c', [m(true, ['bash']), m(false, ['bash', 'read'])])
    expect(s?.configured.retry).toEqual({ value: 'off', from: 'settings.json' })
    expect(s?.configured.compaction).toEqual({ value: null, from: 'differs between attempts (2 values)' })
    expect(s?.observed?.tools).toEqual([
      { name: 'bash', schema_sha256: ['aaaaaaaaaaaaaaaa'], requests: 6 },
      { name: 'read', schema_sha256: ['aaaaaaaaaaaaaaaa'], requests: 3 },
    ])
    expect(s?.observed?.requests).toBe(6)
    expect(summarizeCell('c', [])).toBeNull()
  })
})
