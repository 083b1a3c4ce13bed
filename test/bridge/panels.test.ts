import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { loadBridgeTask } from '../../src/panel/bridge-task.js'
import { listTaskFolders } from '../../src/panel/resolve.js'
import { loadTask } from '../../src/panel/task.js'
import { verifyPanel } from '../../src/panel/verify.js'
import { builtinPanelsDir } from '../../src/util/paths.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

const PANELS = ['bridge-tools', 'bridge-state', 'bridge-files']

describe('shipped bridge panels', () => {
  it('hold the promised mix of tasks', async () => {
    const counts = { tool_calls: 0, end_state: 0, multi_turn_end_state: 0, files_or_command: 0 }
    for (const p of PANELS) {
      const dir = path.join(builtinPanelsDir(), p)
      for (const id of await listTaskFolders(dir)) {
        const bt = await loadBridgeTask(await loadTask(path.join(dir, id)))
        const names = new Set(bt.graders.map((g) => g.name))
        if (names.has('tool_calls')) counts.tool_calls++
        if (names.has('end_state')) counts.end_state++
        if (names.has('end_state') && bt.scenario) counts.multi_turn_end_state++
        if (names.has('files') || names.has('command')) counts.files_or_command++
        expect(bt.reference.length, id).toBeGreaterThan(0)
      }
    }
    expect(counts.tool_calls).toBeGreaterThanOrEqual(8)
    expect(counts.end_state).toBeGreaterThanOrEqual(6)
    expect(counts.multi_turn_end_state).toBeGreaterThanOrEqual(3)
    expect(counts.files_or_command).toBeGreaterThanOrEqual(4)
  })

  it.each(PANELS)('%s: every task fails at the start and passes with its reference', async (p) => {
    const v = await verifyPanel(path.join(builtinPanelsDir(), p))
    expect(v.tasks.length).toBeGreaterThanOrEqual(4)
    for (const t of v.tasks)
      expect([t.id, t.start, t.solution, t.note]).toEqual([t.id, 'fail', 'pass', undefined])
  })

  it('a reference the bridge refuses, or one that already passes, is reported bad', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-bridge-panel-'))
    try {
      const src = path.join(builtinPanelsDir(), 'bridge-state', 'state-cancel-order')
      cpSync(src, path.join(dir, 'broken'), { recursive: true })
      writeFileSync(
        path.join(dir, 'broken', 'solution', 'calls.json'),
        JSON.stringify([{ tool: 'cancel_order', arguments: { order_id: 'W2001', reason: 'bored' } }]),
      )
      cpSync(src, path.join(dir, 'trivial'), { recursive: true })
      writeFileSync(
        path.join(dir, 'trivial', 'solution', 'calls.json'),
        JSON.stringify([{ tool: 'get_order', arguments: { order_id: 'W2001' } }]),
      )
      const v = await verifyPanel(dir)
      const broken = v.tasks.find((t) => t.id === 'broken')
      expect(broken).toMatchObject({ start: 'fail', solution: 'error' })
      expect(broken?.note).toMatch(/reference call 1 \(cancel_order\) gives invalid_arguments/)
      // A read-only reference leaves the world as it starts: the graders pass before any call.
      expect(v.tasks.find((t) => t.id === 'trivial')).toMatchObject({ start: 'pass', solution: 'pass' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('validate on a bridge panel', () => {
  it('refuses an environment with an unknown effect, with file, line and field', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-bridge-validate-'))
    try {
      cpSync(path.join(builtinPanelsDir(), 'bridge-state', 'state-cancel-order'), path.join(dir, 'task-a'), {
        recursive: true,
      })
      const envFile = path.join(dir, 'task-a', 'environment', 'bridge.json')
      const env = JSON.parse(readFileSync(envFile, 'utf8'))
      env.tools[3].effect.op = 'delete'
      writeFileSync(envFile, `${JSON.stringify(env, null, 2)}\n`)
      const manifest = writeManifest(baseManifest({ panel: { source: 'tasks', path: dir } }))
      const errs: string[] = []
      const write = process.stderr.write
      const out = process.stdout.write
      process.stderr.write = ((s: string) => errs.push(String(s)) > 0) as never
      process.stdout.write = (() => true) as never
      let code: number
      try {
        code = await main(['validate', manifest])
      } finally {
        process.stderr.write = write
        process.stdout.write = out
      }
      expect(code).toBe(2)
      const lines = errs.join('').split('\n')
      const line = lines.find((l) => l.includes('bridge.json:'))
      expect(line).toMatch(/task-a\/environment\/bridge\.json:\d+:\d+ tools\[3\]: unknown effect "delete"/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
