import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { loadManifest, parseManifestText } from '../../src/manifest/load.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { HwError } from '../../src/util/errors.js'
import { quotePath } from '../../src/util/paths.js'
import { captureOutput } from '../support/capture.js'
import { withGeneratedPanel } from '../support/swebench-panel.js'

const io = captureOutput()

/** The details of the HwError `fn` throws (fails the test when it does not throw one). */
async function details(fn: () => unknown): Promise<{ message: string; where?: string; details: string[] }> {
  try {
    await fn()
  } catch (e) {
    expect(e).toBeInstanceOf(HwError)
    const err = e as HwError
    return { message: err.message, where: err.where, details: err.details }
  }
  throw new Error('expected an HwError')
}

const head = `schema_version: 1
experiment: { id: exp }
model: { id: m, provider: scripted, api: chat }
`
const cells = `cells:
  - { id: a, harness: command, version: '1', config: { command: 'true' } }
  - { id: b, harness: command, version: '1', config: { command: 'true' } }
baseline: a
`
/** An id-list manifest graded by the task-tests verifier: schema-valid, but no leg can run it. */
const idListTaskTests = `${head}benchmark:
  family: swe-bench-verified
  revision: r1
  verifier:
    kind: task-tests
panel:
  source: inline
  instances: [i-1, i-2]
${cells}`

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

function dirWith(name: string, text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw runnable '))
  const file = path.join(dir, name)
  writeFileSync(file, text)
  return file
}

describe('pairings a leg cannot run are refused at validation', () => {
  it('task-tests grading on an id list, and an id list without setup, located at their fields', () => {
    // Loading alone (aggregate, compare, tests) accepts it: only plan/run/validate ask for a runnable one.
    expect(parseManifestText(idListTaskTests, 'exp.yml').panel.source).toBe('inline')
    let err: HwError | null = null
    try {
      parseManifestText(idListTaskTests, 'exp.yml', { runnable: true })
    } catch (e) {
      err = e as HwError
    }
    expect(err?.code).toBe('manifest_invalid')
    expect(err?.details).toEqual([
      'exp.yml:8:11 benchmark.verifier.kind: "task-tests" (the default kind) needs panel.source tasks or ' +
        'builtin (task folders); for an id list (panel.source inline) use kind: command with a grading command',
      'exp.yml:5:3 benchmark.setup: an id list (panel.source inline) needs benchmark.setup: a command that ' +
        'fills {workspace} for {instance} and writes the prompt to {out}/instruction.md',
    ])
  })

  it('a Python harness in the container backend is refused at its cells[i].harness, saying why', async () => {
    const text = `${head}benchmark: { family: harbor, revision: r1 }
panel: { source: tasks, path: ./tasks }
sandbox:
  backend: container
cells:
  - { id: pi, harness: pi, version: 0.73.1 }
  - { id: oh, harness: openhands, version: 1.0.0 }
  - { id: mini, harness: mini-swe-agent, version: 1.0.0 }
baseline: pi
`
    let err: HwError | null = null
    try {
      parseManifestText(text, 'c.yml', { runnable: true })
    } catch (e) {
      err = e as HwError
    }
    expect(err?.code).toBe('manifest_invalid')
    expect(err?.details).toHaveLength(2)
    expect(err?.details[0]).toMatch(
      /^c\.yml:10:\d+ cells\[1\]\.harness: OpenHands \(pip install openhands, a venv on the runner\) cannot run inside a task's container: its venv's interpreter is the runner's Python/,
    )
    expect(err?.details[0]).toContain('tested to the process boundary')
    expect(err?.details[0]).toContain('sandbox.backend namespace+uid')
    expect(err?.details[1]).toMatch(/^c\.yml:11:\d+ cells\[2\]\.harness: mini-swe-agent /)
    // The same cells on the runner (namespace backend) are runnable.
    const onRunner = text.replace('backend: container', 'backend: namespace+uid')
    expect(parseManifestText(onRunner, 'c.yml', { runnable: true }).cells).toHaveLength(3)
  })

  it('validate warns on an unpinned image only when a scheduled workflow of the repository runs the manifest', async () => {
    const repo = mkdtempSync(path.join(tmpdir(), 'hw-sched-'))
    mkdirSync(path.join(repo, '.git'))
    mkdirSync(path.join(repo, 'manifests'))
    mkdirSync(path.join(repo, '.github', 'workflows'), { recursive: true })
    const file = path.join(repo, 'manifests', 'weekly.yml')
    writeFileSync(
      file,
      `${head}benchmark: { family: builtin, revision: r1 }
panel: { source: builtin, name: core }
sandbox:
  backend: container
  container: { image: 'docker.io/library/python:3.12' }
${cells}`,
    )
    const warning = 'sandbox.container.image "docker.io/library/python:3.12" is not pinned by digest'
    const code = await main(['validate', file])
    expect(io.err).not.toContain(warning)
    expect(code, io.err).toBe(0)
    io.err = ''
    expect(await main(['validate', file, '--scheduled'])).toBe(0)
    expect(io.err).toContain(`${warning} and --scheduled runs this manifest on a schedule`)
    io.err = ''
    writeFileSync(
      path.join(repo, '.github', 'workflows', 'weekly.yml'),
      "on:\n  schedule:\n    - cron: '17 6 * * 1'\njobs:\n  hw:\n    uses: o/r/.github/workflows/harness-watch.yml@v1\n    with:\n      manifest: manifests/weekly.yml\n",
    )
    expect(await main(['validate', file])).toBe(0)
    expect(io.err).toContain(`${warning} and .github/workflows/weekly.yml runs this manifest on a schedule`)
  }, 60_000)

  it('an id list with setup and a command verifier is runnable', () => {
    const text = `${head}benchmark:
  family: swe-bench-verified
  revision: r1
  setup: prepare {instance} {workspace} {out}
  verifier:
    kind: command
    command: grade {instance} {patch}
panel: { source: inline, instances: [i-1] }
${cells}`
    expect(parseManifestText(text, 'ok.yml', { runnable: true }).benchmark.verifier.kind).toBe('command')
  })

  it('validate and plan exit 2 with the located problem before anything runs', async () => {
    const file = dirWith('exp.yml', idListTaskTests)
    expect(await main(['validate', file])).toBe(2)
    expect(io.err).toContain(`${quotePath(`${file}:8:11`)} benchmark.verifier.kind: "task-tests"`)
    io.err = ''
    const out = path.join(path.dirname(file), 'out')
    expect(await main(['plan', file, '--out', out])).toBe(2)
    expect(io.err).toContain('benchmark.setup: an id list (panel.source inline) needs benchmark.setup')
    expect(io.err).not.toMatch(/\n\s+at /)
  })

  it('every shipped manifest still validates', async () => {
    const files = [
      ...(await readdir('manifests')).filter((f) => f.endsWith('.yml')).map((f) => path.join('manifests', f)),
      ...(await readdir('examples/manifests'))
        .filter((f) => f.endsWith('.yml'))
        .map((f) => path.join('examples/manifests', f)),
    ]
    expect(files.length).toBeGreaterThanOrEqual(4)
    // The P0 manifest's panel is generated by Harbor's adapter and committed by its user: it is
    // validated beside stand-ins in Harbor's layout (test/manifest/p0.test.ts checks it closer).
    const generated = new Set(['manifests/p0-swebench-verified.yml'])
    expect(files.filter((f) => generated.has(f))).toEqual([...generated])
    for (const file of files) {
      io.out = ''
      const target = generated.has(file) ? withGeneratedPanel(file) : file
      expect(await main(['validate', target]), `${file}: ${io.err}`).toBe(0)
      expect(io.out).toContain(`${target}: valid`)
    }
  })
})

describe('manifest messages say what is wrong and where', () => {
  it('shards with both count and size', async () => {
    const d = await details(() =>
      parseManifestText(
        `${head}benchmark: { family: builtin, revision: r1 }\npanel: { source: builtin, name: core }\n${cells}shards: { count: 2, size: 1 }\n`,
        'exp.yml',
      ),
    )
    expect(d.details).toEqual(['exp.yml:10:9 shards: give either count or size, not both'])
    const none = await details(() =>
      parseManifestText(
        `${head}benchmark: { family: builtin, revision: r1 }\npanel: { source: builtin, name: core }\n${cells}shards: {}\n`,
        'exp.yml',
      ),
    )
    expect(none.details).toEqual([
      'exp.yml:10:9 shards: give count (number of shards) or size (instances per shard)',
    ])
  })

  it('a duplicate key is named with both positions', async () => {
    const d = await details(() =>
      parseManifestText('schema_version: 1\nexperiment:\n  id: a\n  description: x\n  id: b\n', 'dup.yml'),
    )
    expect(d.details).toEqual([
      'dup.yml:5:3 duplicate key "id" (first at line 3, column 3): keys in one mapping must be unique',
    ])
    const flow = await details(() => parseManifestText('shards: { count: 2, count: 3 }\n', 'dup.yml'))
    expect(flow.details).toEqual([
      'dup.yml:1:21 duplicate key "count" (first at line 1, column 11): keys in one mapping must be unique',
    ])
  })

  it('an inline quarantine id not in the panel is located at its list item; a fully quarantined panel is an error', async () => {
    const text = (q: string) =>
      `${head}benchmark: { family: builtin, revision: r1 }\npanel:\n  source: inline\n  instances: [i-1, i-2]\n  quarantine:\n    - i-1\n    - ${q}\n${cells}`
    const stray = await details(() => parseManifestText(text('zz'), 'q.yml'))
    expect(stray.details).toEqual([
      'q.yml:10:7 panel.quarantine[1]: "zz" is not in the panel (panel.instances)',
    ])
    const all = await details(() => parseManifestText(text('i-2'), 'q.yml'))
    expect(all.details).toEqual([
      'q.yml:9:5 panel.quarantine: the panel is empty after quarantine: every instance is quarantined, so nothing is compared',
    ])
  })

  it('unknown ids in a builtin subset or quarantine are located at their list items', async () => {
    const manifest = (panel: string) =>
      dirWith('exp.yml', `${head}benchmark: { family: builtin, revision: r1 }\npanel:\n${panel}${cells}`)
    const subset = manifest(
      '  source: builtin\n  name: core\n  instances:\n    - js-fix-slugify\n    - nope-1\n',
    )
    const loaded = await loadManifest(subset, { runnable: true })
    const d = await details(() => resolvePanel(loaded.manifest, loaded.dir, subset, loaded.locate))
    expect(d.message).toBe('panel.instances names ids not in the panel: nope-1')
    expect(d.where).toBe(quotePath(subset))
    expect(d.details).toEqual([
      `${quotePath(`${subset}:10:7`)} panel.instances[1]: "nope-1" is not in the panel`,
    ])

    const quarantined = manifest('  source: builtin\n  name: core\n  quarantine: [js-fix-slugify, nope-2]\n')
    const q = await loadManifest(quarantined)
    const dq = await details(() => resolvePanel(q.manifest, q.dir, quarantined, q.locate))
    expect(dq.details).toEqual([
      `${quotePath(`${quarantined}:8:32`)} panel.quarantine[1]: "nope-2" is not in the panel`,
    ])

    const all = manifest(
      '  source: builtin\n  name: core\n  instances: [js-fix-slugify, js-fix-paginate]\n  quarantine: [js-fix-paginate, js-fix-slugify]\n',
    )
    const a = await loadManifest(all)
    const da = await details(() => resolvePanel(a.manifest, a.dir, all, a.locate))
    expect(da.message).toBe('the panel is empty after quarantine: every instance is quarantined')
    expect(da.where).toBe(quotePath(`${all}:9:15`))
  })

  it('paths with spaces are quoted in messages', async () => {
    expect(quotePath('/tmp/a-b/exp.yml:3:1')).toBe('/tmp/a-b/exp.yml:3:1')
    expect(quotePath('/tmp/trial m/exp.yml')).toBe('"/tmp/trial m/exp.yml"')
    const file = dirWith('exp.yml', 'schema_version: 2\n')
    const d = await details(() => loadManifest(file))
    expect(d.message).toMatch(
      new RegExp(`^${escapeRegExp(JSON.stringify(file))}: \\d+ problem\\(s\\) in the manifest$`),
    )
    expect(d.details).toContain(`${JSON.stringify(`${file}:1:17`)} schema_version: Invalid input: expected 1`)
    const missing = path.join(path.dirname(file), 'no such.yml')
    const u = await details(() => loadManifest(missing))
    expect(u.where).toBe(JSON.stringify(missing))
  })
})
