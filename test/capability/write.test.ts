import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { allUnknown, known } from '../../src/capability/facts.js'
import { readCapabilityFile } from '../../src/ingest/capabilities.js'
import { CAPABILITY_NAMES, CapabilityManifestSchema } from '../../src/records/capabilities.js'
import { writeAttemptCapabilities } from '../../src/run/capabilities.js'

const leg = {
  cell: {
    id: 'treatment',
    harness: 'opencode',
    version: '1.18.33',
    config: { args: [], env: {}, pass_env: [], files: {} },
  } as never,
  harnessVersion: '1.18.33',
  model: 'gpt-5-mini',
}

describe('capabilities.json of an attempt', () => {
  it('a harness never prepared: every configured capability unknown with the reason, nothing seen', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-cap-write-'))
    expect(await writeAttemptCapabilities(leg, dir, null, [])).toBe(true)
    const m = CapabilityManifestSchema.parse(
      JSON.parse(readFileSync(path.join(dir, 'capabilities.json'), 'utf8')),
    )
    expect(m.cell_id).toBe('treatment')
    expect(m.harness_version).toBe('1.18.33')
    expect(m.observed).toBeNull()
    for (const name of CAPABILITY_NAMES)
      expect(m.configured[name]).toEqual({
        value: null,
        from: 'the harness was never prepared: its configuration was not read',
      })
  })

  it("a cell's overlong names are cut so that the file always reads back valid", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-cap-write-'))
    const long = 'm'.repeat(5000)
    const configured = {
      ...allUnknown('x'.repeat(900)),
      mcp_servers: known<'mcp_servers'>(
        Array.from({ length: 1500 }, (_, i) => `${long}${i}`),
        'opencode.json mcp',
      ),
      permission_mode: known<'permission_mode'>(long, 'opencode.json permission'),
    }
    expect(await writeAttemptCapabilities(leg, dir, configured, [])).toBe(true)
    const got = await readCapabilityFile(dir, 'capabilities.json', 'treatment')
    if (got === 'missing' || 'ignored' in got) throw new Error(`not read back: ${JSON.stringify(got)}`)
    expect(got.configured.mcp_servers.value).toHaveLength(1000)
    expect(got.configured.mcp_servers.value?.[0]).toBe('m'.repeat(200))
    expect(got.configured.permission_mode.value).toHaveLength(200)
    expect(got.configured.compaction.from).toHaveLength(500)
  })

  it('a logs folder that cannot be written is reported (the attempt is flagged), never thrown', async () => {
    const missing = path.join(mkdtempSync(path.join(tmpdir(), 'hw-cap-write-')), 'gone', 'deeper')
    expect(await writeAttemptCapabilities(leg, missing, null, [])).toBe(false)
  })
})
