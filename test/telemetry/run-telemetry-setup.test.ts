import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadManifest } from '../../src/manifest/load.js'
import { type Manifest, ManifestSchema } from '../../src/manifest/schema.js'
import { openRunTelemetry, type RunTelemetry } from '../../src/run/telemetry-setup.js'
import { packageRoot } from '../../src/util/paths.js'
import { FakeLiteLLM } from './support/fake-litellm.js'

let dir: string
let tel: RunTelemetry | null = null
let fake: FakeLiteLLM | null = null

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hw-run-tel-'))
})
afterEach(async () => {
  await tel?.close()
  tel = null
  await fake?.close()
  fake = null
  await rm(dir, { recursive: true, force: true })
})

async function demo(over: Partial<Record<keyof Manifest, unknown>> = {}): Promise<Manifest> {
  const { manifest } = await loadManifest(path.join(packageRoot(), 'manifests', 'demo.yml'))
  return ManifestSchema.parse({ ...manifest, ...over })
}

describe('openRunTelemetry: what the run log names as the measurement plane', () => {
  it('source litellm names LiteLLM (the recording proxy forwards to it), not a bare recording proxy', async () => {
    fake = await new FakeLiteLLM().start()
    const manifest = await demo({
      model: { id: 'gpt-test', provider: 'openai', api: 'chat', base_url_env: 'LITELLM_BASE_URL' },
      telemetry: { source: 'litellm', litellm: { settle_s: 0.1, max_wait_s: 5 } },
    })
    tel = await openRunTelemetry({
      manifest,
      tasksDir: null,
      runId: 'r',
      journalFile: path.join(dir, 'journal.jsonl'),
      env: { LITELLM_BASE_URL: `${fake.origin}/`, LITELLM_MASTER_KEY: fake.masterKey },
    })
    expect(tel.capture.source).toBe('litellm')
    expect(tel.upstream).toBe(`LiteLLM at ${fake.origin}`)
    expect(tel.description).toBe(`LiteLLM spend logs at ${fake.origin} (recording proxy in front)`)
    expect(tel.model).toBeNull()
  })

  it('source ledger with the scripted model names the recording proxy and the model behind it', async () => {
    tel = await openRunTelemetry({
      manifest: await demo(),
      tasksDir: null,
      runId: 'r',
      journalFile: path.join(dir, 'journal.jsonl'),
    })
    expect(tel.capture.source).toBe('ledger')
    expect(tel.upstream).toBe(tel.model?.origin)
    expect(tel.upstream).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(tel.description).toBe(`recording proxy → ${tel.upstream} (scripted model)`)
  })
})
