import { describe, expect, it } from 'vitest'
import { loadManifest, parseManifestText } from '../../src/manifest/load.js'
import { HwError } from '../../src/util/errors.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

function problems(text: string, file = 'manifests/p0.yml'): string[] {
  try {
    parseManifestText(text, file)
  } catch (e) {
    expect(e).toBeInstanceOf(HwError)
    return (e as HwError).details
  }
  throw new Error('expected the manifest to be rejected')
}

const valid = `schema_version: 1
experiment:
  id: p0
model:
  id: gpt-5.2
  provider: openai
  api: chat
  base_url_env: LITELLM_BASE_URL
benchmark:
  family: swe-bench-verified
  revision: abc
panel:
  source: inline
  instances: [django__django-11099, sympy__sympy-20590]
cells:
  - id: openhands
    harness: openhands
    version: 1.8.3
  - id: opencode
    harness: opencod
    version: 1.18.33
baseline: openhands
`

describe('manifest validation', () => {
  it('accepts a valid manifest and fills the seed defaults', () => {
    const m = parseManifestText(valid.replace('opencod\n', 'opencode\n'), 'm.yml')
    expect(m.thresholds).toEqual({
      resolved_deficit_pp: 10,
      cost_ratio: 1.5,
      fresh_input_ratio: 1.5,
      request_ratio: 1.5,
      min_coverage: 0.8,
    })
    expect(m.trials).toBe(1)
    expect(m.shards).toEqual({ count: 1 })
    expect(m.budgets.timeout_s).toBe(900)
    expect(m.cells[1]?.config).toEqual({ args: [], env: {}, pass_env: [], files: {} })
    expect(m.telemetry.source).toBe('ledger')
  })

  it('names file, line, column and field for an unknown harness', () => {
    expect(problems(valid)).toEqual([
      'manifests/p0.yml:20:14 cells[1].harness: unknown harness "opencod" (known: pi, opencode, codex, claude-code, gemini-cli, copilot, qwen-code, openhands, hermes, mini-swe-agent, agentd, command)',
    ])
  })

  it('rejects duplicate instance ids (F09) and names the duplicate', () => {
    const text = valid
      .replace('opencod\n', 'opencode\n')
      .replace(
        '[django__django-11099, sympy__sympy-20590]',
        '[django__django-11099, sympy__sympy-20590, django__django-11099]',
      )
    expect(problems(text)).toEqual([
      'manifests/p0.yml:14:57 panel.instances[2]: duplicate instance id "django__django-11099" (also at index 0)',
    ])
  })

  it('rejects duplicate cell ids, a baseline that is not a cell, k < 1', () => {
    const text = valid
      .replace('opencod\n', 'opencode\n')
      .replace('id: opencode', 'id: openhands')
      .replace('baseline: openhands', 'baseline: nobody\ntrials: 0')
    expect(problems(text)).toEqual([
      'manifests/p0.yml:23:9 trials: trials (k) must be at least 1',
      'manifests/p0.yml:19:9 cells[1].id: duplicate cell id "openhands" (first used by cells[0])',
      'manifests/p0.yml:22:11 baseline: baseline "nobody" is not a cell (cells: openhands)',
    ])
    const text2 = valid
      .replace('opencod\n', 'opencode\n')
      .replace('id: opencode', 'id: openhands')
      .replace('baseline: openhands', 'baseline: nobody')
    expect(problems(text2)).toEqual([
      'manifests/p0.yml:19:9 cells[1].id: duplicate cell id "openhands" (first used by cells[0])',
      'manifests/p0.yml:22:11 baseline: baseline "nobody" is not a cell (cells: openhands)',
    ])
  })

  it('value_per_resolution_usd: a positive USD figure, located when it is not', () => {
    const ok = valid.replace('opencod\n', 'opencode\n')
    expect(parseManifestText(ok, 'm.yml').reporting.value_per_resolution_usd).toBeUndefined()
    expect(
      parseManifestText(`${ok}reporting:\n  value_per_resolution_usd: 2.5\n`, 'm.yml').reporting
        .value_per_resolution_usd,
    ).toBe(2.5)
    const [negative] = problems(`${ok}reporting:\n  value_per_resolution_usd: -3\n`)
    expect(negative).toMatch(/^manifests\/p0\.yml:24:29 reporting\.value_per_resolution_usd: /)
    const [text] = problems(`${ok}reporting:\n  value_per_resolution_usd: lots\n`)
    expect(text).toMatch(/^manifests\/p0\.yml:24:29 reporting\.value_per_resolution_usd: /)
    // 1e308 per resolution overflows V × (resolved_T − resolved_B) to ±Infinity: refused where it is written
    const [huge] = problems(`${ok}reporting:\n  value_per_resolution_usd: 1e308\n`)
    expect(huge).toMatch(/^manifests\/p0\.yml:24:29 reporting\.value_per_resolution_usd: .*1000000000/)
  })

  it('rejects an empty panel', () => {
    const text = valid.replace('opencod\n', 'opencode\n').replace(/instances: \[.*\]/, 'instances: []')
    expect(problems(text)).toEqual([
      'manifests/p0.yml:14:14 panel.instances: the panel is empty: list at least one instance',
    ])
  })

  it('reports missing and unknown fields with their paths', () => {
    const text = valid.replace('opencod\n', 'opencode\n').replace('  revision: abc\n', '  revison: abc\n')
    expect(problems(text)).toEqual([
      'manifests/p0.yml:10:3 benchmark.revision: required field is missing (expected string)',
      // The unknown key at its own line, with the nearest known key.
      'manifests/p0.yml:11:12 benchmark.revison: unknown field "revison" (did you mean "revision"?)',
    ])
  })

  it('rejects malformed YAML with a position, not a stack trace', () => {
    try {
      parseManifestText('a: [1, 2\nb: 3\n', 'bad.yml')
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(HwError)
      expect((e as HwError).format()).toBe(
        'bad.yml: not valid YAML/JSON\n  bad.yml:2:1 Flow sequence in block collection must be sufficiently indented and end with a ]\n  help: fix the syntax at the position shown',
      )
    }
  })

  it('rejects duplicate keys', () => {
    expect(() => parseManifestText('a: 1\na: 2\n', 'dup.yml')).toThrow(/not valid YAML/)
  })

  it('reads JSON manifests too, with positions', () => {
    const json = JSON.stringify(baseManifest({ trials: 0 }), null, 2)
    expect(problems(json, 'm.json')).toEqual([
      `m.json:${json.split('\n').findIndex((l) => l.includes('"trials"')) + 1}:13 trials: trials (k) must be at least 1`,
    ])
  })

  it('rejects instance ids that could escape a folder', () => {
    const text = valid.replace('opencod\n', 'opencode\n').replace('sympy__sympy-20590', '"../etc"')
    expect(problems(text)[0]).toMatch(/panel\.instances\[1\]: expected an instance id/)
  })

  it('checks cross-field rules: harness api support, command template, non-scripted base URL', () => {
    const file = 'x.yml'
    const m = baseManifest({
      model: { id: 'm', provider: 'openai', api: 'chat' },
      cells: [
        { id: 'a', harness: 'codex', version: '1.0.0', api: 'chat' },
        { id: 'b', harness: 'command', version: '1' },
      ],
    })
    const text = JSON.stringify(m)
    expect(problems(text, file).map((l) => l.replace(/^x\.yml:\d+:\d+ /, ''))).toEqual([
      'cells[0].api: harness codex does not speak the "chat" API (it speaks: responses)',
      'cells[1].config.command: harness "command" needs config.command (a command template)',
      'model: a non-scripted model route needs base_url or base_url_env',
    ])
  })

  it('says a wrong type is a wrong type, not a missing field, and shows the value', () => {
    const text = valid
      .replace('opencod\n', 'opencode\n')
      .replace('    version: 1.8.3', '    version: 1.0')
      .replace('baseline: openhands', 'baseline: openhands\ntrials: "two"\nconcurrency: 1.5\ncells_extra: no')
    expect(problems(text)).toEqual([
      'manifests/p0.yml:18:14 cells[0].version: expected a string, got 1 (write it in quotes, e.g. "1.0")',
      'manifests/p0.yml:23:9 trials: expected number, got "two"',
      'manifests/p0.yml:24:14 concurrency: expected an integer, got 1.5',
      'manifests/p0.yml:25:14 cells_extra: unknown field "cells_extra"',
    ])
  })

  it('rejects command templates with unknown or quoted placeholders when validating', () => {
    const m = baseManifest({
      benchmark: { family: 'f', revision: 'r', setup: 'prep {instance} {wrkspace}' },
      cells: [
        { id: 'a', harness: 'command', version: '1', config: { command: 'agent --prompt "{prompt}"' } },
        {
          id: 'b',
          harness: 'command',
          version: '1',
          config: { command: 'agent {prompt} --json {"a":1} ${HOME}' },
        },
      ],
    })
    expect(problems(JSON.stringify(m), 'x.json').map((l) => l.replace(/^x\.json:\d+:\d+ /, ''))).toEqual([
      'benchmark.setup: unknown placeholder {wrkspace} in template "prep {instance} {wrkspace}" (supported placeholders: {instance} {workspace} {patch} {predictions} {out} {run_id}; write {{ and }} for literal braces)',
      'cells[0].config.command: placeholder {prompt} is inside " quotes in template "agent --prompt "{prompt}"" (remove the quotes around it: every value is shell-quoted when the template is expanded)',
    ])
  })

  it('requires an exact harness version (a range or a tag is not a pin)', () => {
    const m = baseManifest({
      cells: [
        { id: 'a', harness: 'pi', version: 'latest' },
        { id: 'b', harness: 'opencode', version: '^1.18.0' },
        { id: 'c', harness: 'command', version: 'any-label', config: { command: 'true' } },
      ],
    })
    expect(problems(JSON.stringify(m), 'x.json').map((l) => l.replace(/^x\.json:\d+:\d+ /, ''))).toEqual([
      'cells[0].version: "latest" is not an exact version: pin one release, e.g. 1.18.33 (a range or a tag like latest would change under you)',
      'cells[1].version: "^1.18.0" is not an exact version: pin one release, e.g. 1.18.33 (a range or a tag like latest would change under you)',
    ])
  })

  it('loads from disk with a sha256 and per-cell config hashes that ignore key order', async () => {
    const a = await loadManifest(writeManifest(baseManifest()))
    const reordered = baseManifest()
    reordered.cells = [
      { version: '0.73.1', harness: 'pi', id: 'a' },
      { id: 'b', version: '1.18.33', harness: 'opencode' },
    ]
    const b = await loadManifest(writeManifest(reordered))
    expect(a.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(a.configHashes.a).toBe(b.configHashes.a)
    expect(a.configHashes.a).not.toBe(a.configHashes.b)
    const changed = baseManifest()
    changed.cells = [
      { id: 'a', harness: 'pi', version: '0.73.1', config: { args: ['--thinking', 'low'] } },
      { id: 'b', harness: 'opencode', version: '1.18.33' },
    ]
    const c = await loadManifest(writeManifest(changed))
    expect(c.configHashes.a).not.toBe(a.configHashes.a)
  })

  it('names an unreadable file', async () => {
    await expect(loadManifest('/nonexistent/m.yml')).rejects.toThrow('cannot read manifest: ENOENT')
  })
})

describe('an unknown top-level key', () => {
  it('is placed at its own line (not the first key) and the nearest known key is suggested', async () => {
    const { nearestKey } = await import('../../src/manifest/load.js')
    expect(nearestKey('budgetz', ['budgets', 'baseline', 'cells'])).toBe('budgets')
    expect(nearestKey('sandobx', ['sandbox', 'seed'])).toBe('sandbox')
    expect(nearestKey('zzzzzz', ['budgets', 'seed'])).toBeNull()
  })
})
