import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { stringify } from 'yaml'

/** A small valid manifest (inline panel, scripted model) as a plain object; tests override parts. */
export function baseManifest(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_version: 1,
    experiment: { id: 'exp-a', description: 'test' },
    model: { id: 'gpt-5-mini', provider: 'scripted', api: 'chat', prices: { input: 1, output: 2 } },
    benchmark: { family: 'builtin', revision: 'r1' },
    panel: { source: 'inline', instances: ['t-1', 't-2', 't-3', 't-4', 't-5'] },
    cells: [
      { id: 'a', harness: 'pi', version: '0.73.1' },
      { id: 'b', harness: 'opencode', version: '1.18.33' },
    ],
    baseline: 'a',
    ...over,
  }
}

/** Write `text` (or a manifest object as YAML) to a fresh temp folder; returns the file path. */
export function writeManifest(content: string | Record<string, unknown>, name = 'm.yml'): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-manifest-'))
  const file = path.join(dir, name)
  writeFileSync(file, typeof content === 'string' ? content : stringify(content))
  return file
}
