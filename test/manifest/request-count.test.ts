import { describe, expect, it } from 'vitest'
import { parseManifestText } from '../../src/manifest/load.js'
import { HwError } from '../../src/util/errors.js'

const base = `schema_version: 1
experiment:
  id: roles
model:
  id: gpt-5.2
  provider: openai
  api: chat
  base_url_env: LLM_BASE_URL
benchmark:
  family: swe-bench-verified
  revision: abc
panel:
  source: inline
  instances: [django__django-11099]
cells:
  - id: openhands
    harness: openhands
    version: 1.8.3
  - id: opencode
    harness: opencode
    version: 1.18.33
baseline: openhands
`

function problems(text: string): string[] {
  try {
    parseManifestText(text, 'm.yml')
  } catch (e) {
    expect(e).toBeInstanceOf(HwError)
    return (e as HwError).details
  }
  throw new Error('expected the manifest to be rejected')
}

describe('manifest request_count', () => {
  it('is absent by default (all requests count) and accepts primary', () => {
    expect(parseManifestText(base, 'm.yml').request_count).toBeUndefined()
    expect(parseManifestText(`${base}request_count: primary\n`, 'm.yml').request_count).toBe('primary')
  })

  it('names the line and field of a value that is not all or primary', () => {
    expect(problems(`${base}request_count: main\n`)).toEqual([
      expect.stringMatching(/^m\.yml:23:16 request_count: .*"all".*"primary"/),
    ])
  })

  it('refuses primary with spend-log telemetry, which has no request roles', () => {
    const text = `${base}request_count: primary\ntelemetry:\n  source: litellm\n  litellm:\n    base_url_env: LITELLM_BASE_URL\n    master_key_env: LITELLM_MASTER_KEY\n`
    expect(problems(text)).toEqual([
      expect.stringMatching(
        /^m\.yml:23:16 request_count: request_count "primary" needs each request's role, which the recording proxy decides: set telemetry\.source: ledger, or count all requests$/,
      ),
    ])
  })
})
