import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { mkdtemp, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadManifest } from '../../src/manifest/load.js'
import {
  expandTemplate,
  TEMPLATE_PLACEHOLDERS,
  templatePlaceholders,
  writePredictions,
} from '../../src/panel/idlist.js'
import { HwError } from '../../src/util/errors.js'
import { packageRoot } from '../../src/util/paths.js'
import { shellQuote } from '../../src/util/template.js'
import { removeDir } from './fixture.js'

function thrown(fn: () => unknown): HwError {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(HwError)
    return e as HwError
  }
  throw new Error('expected a throw')
}

describe('expandTemplate', () => {
  const dirs: string[] = []
  afterEach(async () => {
    for (const d of dirs.splice(0)) await removeDir(d)
  })

  it('substitutes every placeholder, leaving safe values bare', () => {
    expect(
      expandTemplate(
        'grade --id {instance} --ws {workspace} --patch {patch} --pred {predictions} --out {out} --run {run_id}',
        {
          instance: 'django__django-11099',
          workspace: '/tmp/ws-1',
          patch: '/tmp/p.diff',
          predictions: '/tmp/pred.jsonl',
          out: '/tmp/out',
          run_id: 'r-20261129',
        },
      ),
    ).toBe(
      'grade --id django__django-11099 --ws /tmp/ws-1 --patch /tmp/p.diff --pred /tmp/pred.jsonl --out /tmp/out --run r-20261129',
    )
  })

  it('quotes values so that an id or path cannot inject commands', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hw-template-'))
    dirs.push(dir)
    const hostile = [
      'x; touch PWNED1',
      '$(touch PWNED2)',
      '`touch PWNED3`',
      "it's'; touch PWNED4; '",
      'a && touch PWNED5 || true',
      'new\nline; touch PWNED6',
      '"$(touch PWNED7)"',
      '',
    ]
    for (const [i, instance] of hostile.entries()) {
      const out = path.join(dir, `out dir ${i}`)
      const script = expandTemplate('mkdir -p {out} && printf %s {instance} > {out}/id.txt', {
        instance,
        out,
      })
      execFileSync('bash', ['-c', script], { cwd: dir })
      expect(await readFile(path.join(out, 'id.txt'), 'utf8')).toBe(instance)
    }
    expect(readdirSync(dir).filter((f) => f.startsWith('PWNED'))).toEqual([])
    expect(existsSync(path.join(dir, 'PWNED1'))).toBe(false)
  })

  it('shellQuote output is one shell word with the exact value', () => {
    for (const s of ["a'b", 'sp ace', '$HOME', '*', '~', 'tab\there', "''", 'ünï']) {
      const echoed = execFileSync('bash', ['-c', `printf %s ${shellQuote(s)}`], { encoding: 'utf8' })
      expect(echoed).toBe(s)
    }
    expect(shellQuote('plain-id_1.2')).toBe('plain-id_1.2')
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`)
  })

  it('an unknown placeholder names the template and the placeholder', () => {
    const e = thrown(() =>
      expandTemplate('run {instance} --x {instanse}', { instance: 'a' }, 'benchmark.setup'),
    )
    expect(e.code).toBe('template_invalid')
    expect(e.where).toBe('benchmark.setup')
    expect(e.message).toBe('unknown placeholder {instanse} in template "run {instance} --x {instanse}"')
    expect(e.help).toBe(
      'supported placeholders: {instance} {workspace} {patch} {predictions} {out} {run_id}; write {{ and }} for literal braces',
    )
  })

  it('a placeholder inside quotes is refused (it would keep the quote marks)', () => {
    const e = thrown(() => expandTemplate(`cd "{workspace}" && ls`, { workspace: '/w' }, 'benchmark.setup'))
    expect(e.message).toBe(`placeholder {workspace} is inside " quotes in template "cd "{workspace}" && ls"`)
    expect(thrown(() => templatePlaceholders("echo '{out}'")).message).toMatch(/inside ' quotes/)
    // quotes that are closed before the placeholder, and escaped quotes, are fine
    expect(expandTemplate(`echo "a" {out} \\" 'b'`, { out: 'o' })).toBe(`echo "a" o \\" 'b'`)
  })

  it('a placeholder without a value here is named', () => {
    const e = thrown(() =>
      expandTemplate('prep {instance} {patch}', { instance: 'a', workspace: '/w' }, 'benchmark.setup'),
    )
    expect(e.message).toBe('placeholder {patch} has no value here in template "prep {instance} {patch}"')
    expect(e.help).toBe('this template can use: {instance} {workspace}')
  })

  it('double braces are literal; other brace text is left alone', () => {
    expect(expandTemplate("awk '{{print $1}}' {out}", { out: 'f' })).toBe("awk '{print $1}' f")
    expect(expandTemplate("awk '{ print $1 }' {out}", { out: 'f' })).toBe("awk '{ print $1 }' f")
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion is the subject here
    expect(expandTemplate('echo ${HOME} {instance}', { instance: 'i' })).toBe('echo ${HOME} i')
  })

  it('the legacy SWE-bench manifest templates use supported placeholders only', async () => {
    const loaded = await loadManifest(
      path.join(packageRoot(), 'examples', 'manifests', 'swebench-official-harness.yml'),
    )
    const b = loaded.manifest.benchmark
    expect(b.setup).toBeDefined()
    expect(b.verifier.command).toBeDefined()
    expect(templatePlaceholders(b.setup ?? '', 'benchmark.setup')).toEqual(['instance', 'workspace', 'out'])
    expect(templatePlaceholders(b.verifier.command ?? '', 'benchmark.verifier.command')).toEqual([
      'out',
      'instance',
      'predictions',
      'run_id',
    ])
    // Only the harness's report decides, at a pinned swebench version and dataset revision.
    expect(b.verifier.reports).toBe(true)
    expect(b.verifier.command).toMatch(/--swebench-version 4\.0\.3/)
    expect(b.setup).toMatch(/--revision c104f840/)
    expect(b.revision).toMatch(/@c104f840$/)
    for (const p of templatePlaceholders(b.verifier.command ?? '')) expect(TEMPLATE_PLACEHOLDERS).toContain(p)
    expect(loaded.manifest.panel.instances).toHaveLength(40)
  })
})

describe('writePredictions', () => {
  const dirs: string[] = []
  afterEach(async () => {
    for (const d of dirs.splice(0)) await removeDir(d)
  })

  it('writes SWE-bench predictions JSONL, one object per line in key order', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hw-pred-'))
    dirs.push(dir)
    const file = path.join(dir, 'nested', 'predictions.jsonl')
    const patch = 'diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = "é"\n+a = "ü"\n'
    await writePredictions(file, {
      model_patch: patch,
      instance_id: 'django__django-11099',
      model_name_or_path: 'oh/gpt',
    })
    await writePredictions(
      file,
      { instance_id: 'astropy__astropy-12907', model_name_or_path: 'oh/gpt', model_patch: '' },
      { append: true },
    )
    const text = await readFile(file, 'utf8')
    const lines = text.split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[2]).toBe('')
    expect(lines[0]).toBe(
      `{"instance_id":"django__django-11099","model_name_or_path":"oh/gpt","model_patch":${JSON.stringify(patch)}}`,
    )
    expect(JSON.parse(lines[1] ?? '')).toEqual({
      instance_id: 'astropy__astropy-12907',
      model_name_or_path: 'oh/gpt',
      model_patch: '',
    })
  })

  it('refuses a bad instance id', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hw-pred-'))
    dirs.push(dir)
    const file = path.join(dir, 'p.jsonl')
    await expect(
      writePredictions(file, [{ instance_id: '../etc', model_name_or_path: 'm', model_patch: '' }]),
    ).rejects.toMatchObject({ code: 'prediction_invalid', where: file })
    expect(existsSync(file)).toBe(false)
  })
})
