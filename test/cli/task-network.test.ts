// A task whose task.toml asks for network_mode = "public" gets it only where the manifest says
// sandbox.container.network: task; validate and plan say so, one line per task that is refused.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { SandboxSettingSchema } from '../../src/manifest/schema.js'
import { panelTasks, taskNetworkNotes } from '../../src/pipeline/task-network.js'
import { captureOutput } from '../support/capture.js'

const io = captureOutput()
const fixture = path.resolve('examples/swebench/harbor-fixture/mathx__mathx-1')

/** A panel folder of copies of the SWE-bench-shaped fixture, each with `extra` appended to task.toml. */
function panel(tasks: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'hw-task-network-'))
  const dir = path.join(root, 'tasks')
  mkdirSync(dir)
  for (const [id, extra] of Object.entries(tasks)) {
    cpSync(fixture, path.join(dir, id), { recursive: true })
    const toml = path.join(dir, id, 'task.toml')
    // Harbor's sections are tables: a key for one of them goes right under its header.
    let text = readFileSync(toml, 'utf8')
    for (const line of extra.split('\n').filter(Boolean)) {
      const [section, key] = line.split('|') as [string, string]
      text = text.replace(`[${section}]\n`, `[${section}]\n${key}\n`)
    }
    writeFileSync(toml, text)
  }
  return dir
}

const container = (network: string) =>
  SandboxSettingSchema.parse({ backend: 'container', container: { network } })

describe('public network asked by a task, given only by network: task', () => {
  it('proxy-only: one line per task that asks, naming its file, the phases and what each gets', async () => {
    const dir = panel({
      'a__a-1': 'verifier|network_mode = "public"',
      'b__b-2': 'environment|network_mode = "public"',
      'c__c-3': '',
    })
    const tasks = await panelTasks(dir, ['a__a-1', 'b__b-2', 'c__c-3'])
    const notes = taskNetworkNotes(container('proxy-only'), tasks, { cwd: path.dirname(dir) })
    expect(notes.warnings).toEqual([
      'task a__a-1 (tasks/a__a-1/task.toml) asks for network_mode "public" for its verifier; ' +
        'sandbox.container.network is "proxy-only", so the verifier gets no network (only network: task gives it)',
      'task b__b-2 (tasks/b__b-2/task.toml) asks for network_mode "public" for its agent and verifier; ' +
        'sandbox.container.network is "proxy-only", so the agent gets only the proxy, the verifier gets no network ' +
        '(only network: task gives it)',
    ])
    expect(notes.summary).toBe(
      'network     proxy-only (sandbox.container.network): agent proxy-only ×3; verifier none ×3',
    )
    // none: nothing for either phase, and the lines say so.
    const none = taskNetworkNotes(container('none'), tasks, { cwd: path.dirname(dir) })
    expect(none.warnings[1]).toContain('so the agent gets no network, the verifier gets no network')
  })

  it('network: task gives each phase what its task asks: no warning, and the summary counts it', async () => {
    const dir = panel({
      'a__a-1': 'verifier|network_mode = "public"',
      'b__b-2': 'environment|network_mode = "public"',
      'c__c-3': 'agent|network_mode = "no-network"',
    })
    const tasks = await panelTasks(dir, ['a__a-1', 'b__b-2', 'c__c-3'])
    const notes = taskNetworkNotes(container('task'), tasks)
    expect(notes.warnings).toEqual([])
    expect(notes.summary).toBe(
      'network     task (sandbox.container.network): agent proxy-only ×1, public ×1, none ×1; verifier public ×2, none ×1',
    )
  })

  it('many tasks are not a wall: ten lines, then one line counting the rest', async () => {
    const ids = Array.from({ length: 13 }, (_, i) => `r__r-${i + 10}`)
    const dir = panel(Object.fromEntries(ids.map((id) => [id, 'verifier|network_mode = "public"'])))
    const notes = taskNetworkNotes(container('proxy-only'), await panelTasks(dir, ids))
    expect(notes.warnings).toHaveLength(11)
    expect(notes.warnings.slice(0, 10).every((l, i) => l.startsWith(`task ${ids[i]} (`))).toBe(true)
    expect(notes.warnings[10]).toBe(
      '3 more task(s) ask for a public network the manifest does not give (13 in all)',
    )
  })

  it('host backends share the host network: nothing to say', async () => {
    const dir = panel({ 'a__a-1': 'verifier|network_mode = "public"' })
    const notes = taskNetworkNotes(
      SandboxSettingSchema.parse({ backend: 'auto' }),
      await panelTasks(dir, ['a__a-1']),
    )
    expect(notes).toEqual({ summary: null, warnings: [] })
  })

  it('validate and plan print the line for the task that asks, and nothing for the others', async () => {
    const dir = panel({ 'a__a-1': 'verifier|network_mode = "public"', 'c__c-3': '' })
    const manifest = path.join(path.dirname(dir), 'exp.yml')
    writeFileSync(
      manifest,
      `schema_version: 1
experiment: { id: net }
model: { id: m, provider: scripted, api: chat }
benchmark: { family: harbor, revision: r1, verifier: { kind: task-tests } }
panel: { source: tasks, path: tasks }
cells:
  - { id: a, harness: pi, version: 0.73.1 }
  - { id: b, harness: opencode, version: 1.18.33 }
baseline: a
sandbox: { backend: container, allow_unisolated: true, container: { network: proxy-only } }
`,
    )
    expect(await main(['validate', manifest]), io.err).toBe(0)
    expect(io.out).toContain(
      'network     proxy-only (sandbox.container.network): agent proxy-only ×2; verifier none ×2\n',
    )
    const lines = io.err.split('\n').filter((l) => l.includes('network_mode'))
    expect(lines).toEqual([
      expect.stringMatching(
        /^warning: task a__a-1 \(.*a__a-1\/task\.toml\) asks for network_mode "public" for its verifier; sandbox\.container\.network is "proxy-only", so the verifier gets no network \(only network: task gives it\)$/,
      ),
    ])
    io.err = ''
    const out = mkdtempSync(path.join(tmpdir(), 'hw-task-network-plan-'))
    expect(await main(['plan', manifest, '--out', out])).toBe(0)
    expect(io.err.split('\n').filter((l) => l.includes('network_mode'))).toHaveLength(1)
  })
})
