// validate's warning for a command cell whose script the sandbox will not show (the PR canary as
// first shipped: every cell failed with "Cannot find module" and the check was inconclusive).
import { describe, expect, it } from 'vitest'
import { parseManifestText } from '../../src/manifest/load.js'
import { sandboxPathWarnings } from '../../src/manifest/sandbox-paths.js'
import { baseManifest } from '../support/manifests.js'

const manifest = (command: string, sandbox: Record<string, unknown> = {}) =>
  parseManifestText(
    JSON.stringify(
      baseManifest({
        cells: [
          { id: 'a', harness: 'command', version: '1', config: { command } },
          { id: 'b', harness: 'pi', version: '0.73.1' },
        ],
        sandbox,
      }),
    ),
    '/repo/.github/harness-watch/m.yml',
  )

describe('command paths outside what the sandbox shows', () => {
  const dir = '/repo/.github/harness-watch'

  it('names the folder and the sandbox.read_only entry to add (relative to the manifest)', () => {
    const m = manifest('node "$GITHUB_WORKSPACE/hw-head/bin/agent.js" --model {model} {prompt}')
    expect(sandboxPathWarnings(m, dir, '/repo')).toEqual([
      'cell a: its command reads $GITHUB_WORKSPACE/hw-head/bin/agent.js, outside what the sandbox shows a harness (its install, its workspace, system folders and sandbox.read_only): add "../../hw-head" to sandbox.read_only (the folder /repo/hw-head, relative to this manifest)',
    ])
  })

  it('says nothing once the folder (or a parent) is exposed, for system folders, or without isolation', () => {
    const cmd = 'node "${GITHUB_WORKSPACE}/hw-head/bin/agent.js" && /usr/bin/env true'
    expect(sandboxPathWarnings(manifest(cmd, { read_only: ['../../hw-head'] }), dir, '/repo')).toEqual([])
    expect(sandboxPathWarnings(manifest(cmd, { read_only: ['../..'] }), dir, '/repo')).toEqual([])
    expect(
      sandboxPathWarnings(manifest(cmd, { backend: 'env-only', allow_unisolated: true }), dir, '/repo'),
    ).toEqual([])
  })

  it('absolute paths and a script at the workspace root name their own folder; a home path cannot be exposed', () => {
    const warnings = sandboxPathWarnings(
      manifest('python3 /srv/tools/agent.py && node $GITHUB_WORKSPACE/agent.js && bash ~/run.sh'),
      dir,
      '/repo',
    )
    expect(warnings).toHaveLength(3)
    expect(warnings[0]).toContain('add "../../../srv/tools" to sandbox.read_only (the folder /srv/tools')
    expect(warnings[1]).toContain('add "../.." to sandbox.read_only (the folder /repo,')
    expect(warnings[2]).toMatch(/reads ~\/run\.sh, but the sandbox gives the harness an empty home/)
  })
})
