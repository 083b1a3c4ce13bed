// The proposal's manifest patch is a real unified diff of the manifest file: `git apply` and
// `patch -p1` apply it from the repository root, and the patched manifest passes `validate` (the real
// command, in process). From the scripted analyst of a diagnosed run to diagnosis/proposal.patch, and
// the pure builder on fragments an analyst may write.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'
import { main } from '../../src/cli/index.js'
import { manifestPatch } from '../../src/diagnose/manifest-patch.js'
import type { AnalystPort } from '../../src/dialogue/analyst-port.js'
import { scriptedAnalyst } from '../../src/model/analyst-script.js'
import { diagnoseRun, readDiagnosis } from '../../src/pipeline/diagnose.js'
import { sha256 } from '../../src/util/json.js'
import { captureOutput } from '../support/capture.js'
import { baseManifest } from '../support/manifests.js'
import { diffOf, jsonl, makeRunDir, opencodeEvents, piEvents, rowsEvery, type Step } from './run-dir.js'

const root = path.resolve(import.meta.dirname, '..', '..')
const io = captureOutput()

/** A git repository holding `files` (relative path → text), committed. */
function repo(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-patch-repo-'))
  const git = (...a: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: dir, encoding: 'utf8' })
  git('init', '-q')
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true })
    writeFileSync(path.join(dir, f), text)
  }
  git('add', '.')
  git('commit', '-qm', 'manifest')
  return dir
}

/** Apply `diff` in `dir` with git apply (checked first) and, in a copy, with patch -p1; both texts. */
function applyBoth(dir: string, file: string, diff: string): { git: string; patch: string } {
  const patchFile = path.join(mkdtempSync(path.join(tmpdir(), 'hw-patch-')), 'proposal.patch')
  writeFileSync(patchFile, diff)
  const copy = mkdtempSync(path.join(tmpdir(), 'hw-patch-copy-'))
  mkdirSync(path.dirname(path.join(copy, file)), { recursive: true })
  copyFileSync(path.join(dir, file), path.join(copy, file))
  execFileSync('git', ['apply', '--check', patchFile], { cwd: dir })
  execFileSync('git', ['apply', patchFile], { cwd: dir })
  execFileSync('patch', ['-p1', '--quiet', '-i', patchFile], { cwd: copy })
  return {
    git: readFileSync(path.join(dir, file), 'utf8'),
    patch: readFileSync(path.join(copy, file), 'utf8'),
  }
}

/** A compared run whose t-2 is discordant (b offers 9 tools where a offers 7), planned from `file` in `dir`. */
async function diagnosedRun(dir: string, file: string, sha: string, analyst: AnalystPort = scriptedAnalyst) {
  const run = await makeRunDir({ both: 1, bOnly: 1, cOnly: 0, neither: 0 })
  const find = (cell: string) => run.attempts.find((a) => a.cell_id === cell && a.instance_id === 't-2')!
  const steps: Step[] = [{ s: 1, tool: 'read', args: { path: 'src/x.js' }, output: 'x' }]
  for (const [cell, tools, events] of [
    ['a', 7, piEvents],
    ['b', 9, opencodeEvents],
  ] as const) {
    const at = find(cell)
    run.write(at, {
      trajectory: jsonl(events(at, steps)),
      patch: diffOf('src/x.js'),
      ledger: rowsEvery(at, 3, 1, { tools }),
    })
  }
  await run.aggregate()
  const planPath = path.join(run.dir, 'plan.json')
  const plan = JSON.parse(readFileSync(planPath, 'utf8'))
  plan.manifest_file = file
  plan.manifest_sha256 = sha
  writeFileSync(planPath, JSON.stringify(plan))
  return diagnoseRun({ dir: run.dir, analyst, repoRoot: dir })
}

/**
 * The scripted analyst, its candidate cell changing a field: the harness version (the scripted
 * fragment states its change only in a comment, which changes nothing).
 */
const versionAnalyst: AnalystPort = {
  route: 'scripted',
  async answer(session) {
    const reply = await scriptedAnalyst.answer(session)
    const answer = reply.answer as { single_variable_experiment: { manifest_patch: string } }
    const exp = answer.single_variable_experiment
    exp.manifest_patch = exp.manifest_patch.replace(/\n {4}# .*$/, '\n    version: 1.18.34')
    return reply
  },
}

/** A manifest validate accepts (the built-in panel), as committed text. */
const manifestText = `# The experiment\n${stringify(baseManifest({ benchmark: { family: 'builtin', revision: 'core-v1' }, panel: { source: 'builtin', name: 'core' } }))}# trailing comment kept in place\nreporting:\n  labels: [harness-watch]\n`

describe('diagnose: the proposed experiment as a patch of the manifest file', () => {
  it('the analyst’s candidate cell: proposal.patch applies with git apply and patch -p1, and validate passes', async () => {
    // The manifest the run was planned from, committed in the repository the run started in.
    const text = manifestText
    const file = '.github/harness-watch/exp.yml'
    const dir = repo({ [file]: text })
    const r = await diagnosedRun(dir, file, sha256(text), versionAnalyst)
    expect(r.proposal?.grounding.status).toBe('grounded')
    const diff = readFileSync(path.join(r.roundDir, 'diagnosis', 'proposal.patch'), 'utf8')
    expect(diff.split('\n').slice(0, 3)).toEqual([
      `diff --git a/${file} b/${file}`,
      `--- a/${file}`,
      `+++ b/${file}`,
    ])
    // Only added lines: the candidate cell, every field it does not change taken from b.
    expect(diff.split('\n').filter((l) => l.startsWith('-') && !l.startsWith('---'))).toEqual([])
    const applied = applyBoth(dir, file, diff)
    expect(applied.patch).toBe(applied.git)
    const patched = parse(applied.git) as { cells: { id: string; harness: string; version: string }[] }
    expect(patched.cells).toEqual([
      { id: 'a', harness: 'pi', version: '0.73.1' },
      { id: 'b', harness: 'opencode', version: '1.18.33' },
      { id: 'b-candidate', harness: 'opencode', version: '1.18.34' },
    ])
    expect(applied.git.startsWith(text.split('cells:')[0] as string)).toBe(true)
    expect(applied.git).toContain('# trailing comment kept in place\nreporting:')

    // The real validate on the patched file.
    expect(await main(['validate', path.join(dir, file)]), io.err).toBe(0)
    expect(io.out).toContain('b-candidate')

    // report.md and the published summary quote the diff and say how to apply it.
    const md = readFileSync(path.join(r.roundDir, 'report.md'), 'utf8')
    expect(md).toContain(
      `A patch of \`${file}\` adding the candidate cell (\`diagnosis/proposal.patch\` beside the dossier)`,
    )
    expect(md).toContain(`\`\`\`diff\n${diff}`)
    const summary = await readDiagnosis(r.roundDir)
    expect(summary?.patch).toEqual({ path: 'diagnosis/proposal.patch', manifest: file, diff })
  })

  it('a candidate that changes nothing but its id (the change only in a comment) gets no patch; the report says why', async () => {
    const dir = repo({ 'exp.yml': manifestText })
    const r = await diagnosedRun(dir, 'exp.yml', sha256(manifestText))
    expect(r.proposal?.grounding.status).toBe('grounded')
    const md = readFileSync(path.join(r.roundDir, 'report.md'), 'utf8')
    expect(md).toContain(
      '(no patch file: the proposed cell b-candidate is b again: it changes no field (its version, model or config args, env or files), so it would compare b with itself; a change stated only in a comment is none)',
    )
    expect(md).toContain(
      '```yaml\ncells:\n  - id: b-candidate\n    harness: opencode\n    # same version and config as b',
    )
    expect((await readDiagnosis(r.roundDir))?.patch).toBeUndefined()
  })

  it('a manifest changed since the run gets no patch; the report says why and shows the YAML', async () => {
    const dir = repo({ 'exp.yml': manifestText })
    const r = await diagnosedRun(dir, 'exp.yml', '0'.repeat(64))
    expect(r.proposal?.grounding.status).toBe('grounded')
    const md = readFileSync(path.join(r.roundDir, 'report.md'), 'utf8')
    expect(md).toContain("(no patch file: exp.yml changed since the run (its sha256 is not the plan's))")
    expect(md).toContain('```yaml\ncells:\n  - id: b-candidate')
    expect((await readDiagnosis(r.roundDir))?.patch).toBeUndefined()
  })
})

describe('manifestPatch (pure): fragments an analyst may write', () => {
  const demo = readFileSync(path.join(root, 'manifests', 'demo.yml'), 'utf8')

  it('the demo manifest: a new version for opencode as the only change; the patch validates', async () => {
    const r = manifestPatch({
      text: demo,
      file: 'manifests/demo.yml',
      fragment: 'cells:\n  - id: opencode-candidate\n    harness: opencode\n    version: 1.18.34\n',
    })
    if (!r.ok) throw new Error(r.reason)
    expect(r.cells).toEqual(['opencode-candidate'])
    expect(r.diff).toMatch(/^@@ -\d+,6 \+\d+,9 @@$/m)
    expect(r.diff).toContain(
      '     version: 1.18.33\n+  - id: opencode-candidate\n+    harness: opencode\n+    version: 1.18.34\n baseline: pi\n',
    )
    const dir = repo({ 'manifests/demo.yml': demo })
    const applied = applyBoth(dir, 'manifests/demo.yml', r.diff)
    expect(applied.patch).toBe(applied.git)
    expect(await main(['validate', path.join(dir, 'manifests', 'demo.yml')])).toBe(0)
    expect(io.out).toContain('opencode-candidate')
  })

  it('config the fragment sets replaces the parent’s; a bare cell mapping is accepted', () => {
    const text = stringify(
      baseManifest({
        cells: [
          { id: 'a', harness: 'pi', version: '0.73.1' },
          { id: 'b', harness: 'opencode', version: '1.18.33', config: { args: ['--x'] } },
        ],
      }),
    )
    const r = manifestPatch({ text, file: 'm.yml', fragment: 'id: b-no-x\nconfig: { args: [] }\n' })
    if (!r.ok) throw new Error(r.reason)
    expect(r.diff).toContain(
      '+  - id: b-no-x\n+    harness: opencode\n+    version: 1.18.33\n+    config:\n+      args: []\n',
    )
  })

  it('a file whose last line has no newline: the patch still applies', () => {
    const text = stringify(baseManifest({ baseline: undefined })).replace(/baseline: null\n/, '')
    const noEol = `${text.replace(/\n$/, '')}`
    expect(noEol.endsWith('\n')).toBe(false)
    const r = manifestPatch({
      text: noEol,
      file: 'm.yml',
      fragment: 'cells:\n  - id: a-2\n    harness: pi\n    version: 0.73.2\n',
    })
    if (!r.ok) throw new Error(r.reason)
    const dir = repo({ 'm.yml': noEol })
    const applied = applyBoth(dir, 'm.yml', r.diff)
    expect(applied.patch).toBe(applied.git)
    expect((parse(applied.git) as { cells: { id: string }[] }).cells.map((c) => c.id)).toEqual([
      'a',
      'b',
      'a-2',
    ])
  })

  it.each([
    ['cells:\n  - harness: pi\n', 'a proposed cell has no id'],
    ['cells:\n  - id: b\n', 'the proposed cell id b is already a cell of the manifest'],
    [
      'cells:\n  - id: z-candidate\n    harness: codex\n',
      'the proposed cell z-candidate derives from no cell of the manifest (name it <cell id>-…, or use a harness one cell has)',
    ],
    ['# nothing but a comment\n', 'the proposed fragment names no cell (expected `cells:` with a list)'],
    ['cells: [unclosed\n', 'the proposed fragment is not YAML'],
    [
      'cells:\n  - id: b-candidate\n    harness: opencode\n    # only the tools offered changed\n',
      'the proposed cell b-candidate is b again: it changes no field',
    ],
    ['cells:\n  - id: b-same\n    version: 1.18.33\n', 'the proposed cell b-same is b again'],
  ])('%j is refused: %s', (fragment, reason) => {
    const r = manifestPatch({ text: stringify(baseManifest()), file: 'm.yml', fragment })
    expect(r.ok).toBe(false)
    expect(r.ok ? '' : r.reason).toContain(reason)
  })

  it('a manifest path outside the repository is refused', () => {
    const r = manifestPatch({ text: stringify(baseManifest()), file: '../m.yml', fragment: 'id: a-2\n' })
    expect(r).toEqual({ ok: false, reason: 'the manifest path ../m.yml is not inside the repository' })
  })
})
