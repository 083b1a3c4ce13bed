import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { openEnvironment } from '../../src/bridge/open.js'
import { parseManifestText } from '../../src/manifest/load.js'
import { ANSWER_FILE } from '../../src/run/bridge-source.js'
import { instanceSource } from '../../src/run/instances.js'
import type { SourceDirs } from '../../src/run/verdict.js'
import { builtinPanelsDir } from '../../src/util/paths.js'
import { baseManifest } from '../support/manifests.js'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'hw-bridge-source-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

function source(panel: string) {
  const manifest = parseManifestText(
    stringify(baseManifest({ panel: { source: 'builtin', name: panel } })),
    'm.yml',
  )
  return instanceSource({
    manifest,
    tasksDir: path.join(builtinPanelsDir(), panel),
    runId: 'r1',
    label: 'a',
    setupTimeoutS: 30,
    templatesDir: path.join(dir, 'templates'),
  })
}

function dirsFor(name: string): SourceDirs {
  const d = {
    workspace: path.join(dir, name, 'ws'),
    scratch: path.join(dir, name, 'scratch'),
    logsDir: path.join(dir, name, 'logs'),
  }
  for (const p of Object.values(d)) mkdirSync(p, { recursive: true })
  return d
}

describe('the bridge instance source', () => {
  it('prepares a workspace without the environment file, and grades in verify from the private state', async () => {
    const src = source('bridge-state')
    try {
      const good = dirsFor('good')
      const prepared = await src.prepare('state-cancel-order', good)
      expect(prepared.prompt).toContain('W2001')
      expect(prepared.bridge?.envFile).toMatch(/state-cancel-order\/environment\/bridge\.json$/)
      expect(prepared.bridge?.stateDir.startsWith(good.scratch)).toBe(true)
      // The attempt sees neither the world nor the graders.
      expect(existsSync(path.join(good.workspace, 'bridge.json'))).toBe(false)
      expect(readFileSync(path.join(good.workspace, '.git', 'HEAD'), 'utf8')).toContain('ref:')

      // The harness's calls, through the bridge as the adapter would start it.
      const b = prepared.bridge as NonNullable<typeof prepared.bridge>
      const { dispatcher } = await openEnvironment(b.envFile, b.stateDir, b.sandbox)
      await dispatcher.call('get_order', { order_id: 'W2001' })
      await dispatcher.call('cancel_order', { order_id: 'W2001', reason: 'not-a-reason' })
      await dispatcher.call('cancel_order', { order_id: 'W2001', reason: 'ordered_by_mistake' })
      writeFileSync(path.join(good.scratch, ANSWER_FILE), 'Cancelled.')
      const v = await src.verify('state-cancel-order', good, path.join(good.logsDir, 'patch.diff'))
      expect(v).toMatchObject({
        status: 'pass',
        reward: 1,
        reason: null,
        tools: { calls: 3, ok: 2, error: 0, invalid_arguments: 1 },
      })
      expect(JSON.parse(readFileSync(path.join(good.logsDir, 'grade.json'), 'utf8')).grade.code).toBe('ok')
      expect(readFileSync(path.join(good.logsDir, 'calls.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3)

      // A harness that never started the bridge: the initial world, graded fail (not an error).
      const idle = dirsFor('idle')
      await src.prepare('state-cancel-order', idle)
      expect(await src.verify('state-cancel-order', idle, '')).toMatchObject({
        status: 'fail',
        reward: 0,
        tools: { calls: 0 },
      })

      // A forged world file: an error verdict with its reason, never a crash or a 0.
      const forged = dirsFor('forged')
      const fp = await src.prepare('state-cancel-order', forged)
      writeFileSync(path.join(fp.bridge?.stateDir ?? '', 'world.json'), '[1, 2')
      const fv = await src.verify('state-cancel-order', forged, '')
      expect(fv.status).toBe('error')
      expect(fv.reward).toBeNull()
    } finally {
      await src.dispose()
    }
  })

  it('copies environment/workspace into the sandbox for files tasks', async () => {
    const src = source('bridge-files')
    try {
      const d = dirsFor('files')
      const p = await src.prepare('files-fix-typo', d)
      expect(readFileSync(path.join(d.workspace, 'docs/guide.md'), 'utf8')).toContain('recieve')
      const b = p.bridge as NonNullable<typeof p.bridge>
      const { dispatcher } = await openEnvironment(b.envFile, b.stateDir, b.sandbox)
      const text = readFileSync(path.join(d.workspace, 'docs/guide.md'), 'utf8').replaceAll(
        'recieve',
        'receive',
      )
      expect((await dispatcher.call('write_file', { path: 'docs/guide.md', content: text })).status).toBe(
        'ok',
      )
      expect(await src.verify('files-fix-typo', d, '')).toMatchObject({ status: 'pass', reward: 1 })
    } finally {
      await src.dispose()
    }
  })
})
