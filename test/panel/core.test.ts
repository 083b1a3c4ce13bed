import { cp, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/index.js'
import { loadManifest } from '../../src/manifest/load.js'
import { listTaskFolders, resolvePanel } from '../../src/panel/resolve.js'
import { loadTask, type Task } from '../../src/panel/task.js'
import { verifyPanel } from '../../src/panel/verify.js'
import { runProcessGroup } from '../../src/process/exec.js'
import { builtinPanelsDir, packageRoot } from '../../src/util/paths.js'

const CORE = path.join(builtinPanelsDir(), 'core')

async function coreTasks(): Promise<Task[]> {
  const ids = await listTaskFolders(CORE)
  return Promise.all(ids.map((id) => loadTask(path.join(CORE, id))))
}

async function folderBytes(dir: string): Promise<number> {
  let total = 0
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) total += (await stat(path.join(e.parentPath, e.name))).size
  }
  return total
}

describe('built-in panel "core"', () => {
  it('resolves from the demo manifest and validates through the CLI', async () => {
    const loaded = await loadManifest(path.join(packageRoot(), 'manifests', 'demo.yml'))
    const panel = await resolvePanel(loaded.manifest, loaded.dir, 'manifests/demo.yml')
    expect(panel.tasksDir).toBe(CORE)
    expect(panel.instances.length).toBeGreaterThanOrEqual(12)
    expect(panel.instances).toEqual(await listTaskFolders(CORE))
    const out = process.stdout.write.bind(process.stdout)
    let printed = ''
    process.stdout.write = ((s: string) => {
      printed += s
      return true
    }) as typeof process.stdout.write
    try {
      expect(await main(['validate', path.join(packageRoot(), 'manifests', 'demo.yml')])).toBe(0)
    } finally {
      process.stdout.write = out
    }
    expect(printed).toContain(`${panel.instances.length} instances from builtin`)
  })

  it('is a balanced set of small, neutral task folders', async () => {
    const tasks = await coreTasks()
    expect(tasks.length).toBeGreaterThanOrEqual(14)
    const by = (f: (t: Task) => string | undefined) => {
      const counts: Record<string, number> = {}
      for (const t of tasks) counts[f(t) ?? '(none)'] = (counts[f(t) ?? '(none)'] ?? 0) + 1
      return counts
    }
    const langs = by((t) => t.meta.language)
    expect(Math.abs((langs.javascript ?? 0) - (langs.python ?? 0))).toBeLessThanOrEqual(2)
    expect(by((t) => t.meta.category).refactor).toBeGreaterThanOrEqual(2)
    expect(Object.keys(by((t) => t.meta.difficulty)).sort()).toEqual(['easy', 'hard', 'medium'])
    for (const t of tasks) {
      const lang = t.meta.language === 'javascript' ? 'js' : 'py'
      const kind = ({ bugfix: 'fix', feature: 'feature', refactor: 'refactor' } as Record<string, string>)[
        t.meta.category ?? ''
      ]
      expect(t.id.startsWith(`${lang}-${kind}-`), t.id).toBe(true)
      expect(t.testCommand, t.id).toBe(
        t.meta.language === 'javascript' ? 'node --test' : 'python3 -m unittest -q',
      )
      expect(t.hasSolution, t.id).toBe(true)
      expect(t.instruction, t.id).toContain(`\`${t.testCommand}\``)
      expect(t.instruction, t.id).not.toMatch(/claude|codex|opencode|gemini|copilot|qwen|openhands|\bpi\b/i)
      expect(await folderBytes(t.dir), t.id).toBeLessThan(20 * 1024)
      if (t.meta.language === 'javascript') {
        // Node built-ins only: no dependencies to install
        const pkg = JSON.parse(await readFile(path.join(t.paths.environment, 'package.json'), 'utf8'))
        expect(pkg.dependencies ?? {}, t.id).toEqual({})
        expect(pkg.devDependencies ?? {}, t.id).toEqual({})
      }
    }
  })

  it('every task starts failing and passes with its reference solution', async () => {
    const result = await verifyPanel(CORE, { concurrency: 2 })
    expect(result.tasks.length).toBeGreaterThanOrEqual(14)
    expect(result.tasks.filter((t) => t.start !== 'fail' || t.solution !== 'pass')).toEqual([])
  }, 300_000)

  it('visible tests fail at the start (refactors: pass) and pass after the solution', async () => {
    const rows: string[] = []
    for (const t of await coreTasks()) {
      const ws = await mkdtemp(path.join(os.tmpdir(), `hw-visible-${t.id}-`))
      try {
        await cp(t.paths.environment, ws, { recursive: true })
        const run = () =>
          runProcessGroup('bash', ['-c', t.testCommand ?? 'false'], {
            cwd: ws,
            timeoutMs: 60_000,
            env: { PYTHONDONTWRITEBYTECODE: '1' },
          })
        const start = await run()
        const solve = await runProcessGroup('bash', [t.paths.solveScript ?? ''], {
          cwd: ws,
          timeoutMs: 60_000,
        })
        const after = await run()
        rows.push(
          `${t.id} start=${start.exitCode === 0 ? 'pass' : 'fail'} solve=${solve.exitCode} after=${after.exitCode === 0 ? 'pass' : 'fail'}`,
        )
      } finally {
        await rm(ws, { recursive: true, force: true })
      }
    }
    const tasks = await coreTasks()
    expect(rows).toEqual(
      tasks.map(
        (t) => `${t.id} start=${t.meta.category === 'refactor' ? 'pass' : 'fail'} solve=0 after=pass`,
      ),
    )
  }, 300_000)
})
