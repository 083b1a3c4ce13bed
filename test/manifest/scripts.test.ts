// A setup or verifier script that does not exist is a located error from validate and plan, naming the
// folder the path resolves against (the current folder: the repository root in GitHub Actions).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseManifestText } from '../../src/manifest/load.js'
import { assertScriptsExist, missingScripts } from '../../src/manifest/scripts.js'
import { baseManifest } from '../support/manifests.js'

const idList = (setup: string, verifier: string) =>
  parseManifestText(
    JSON.stringify(
      baseManifest({
        benchmark: { family: 'swe', revision: 'r', setup, verifier: { kind: 'command', command: verifier } },
      }),
    ),
    '/repo/manifests/m.yml',
  )

describe('setup and verifier scripts resolve against the current folder', () => {
  const repo = mkdtempSync(path.join(tmpdir(), 'hw-scripts-'))
  mkdirSync(path.join(repo, 'tools'))
  writeFileSync(path.join(repo, 'tools', 'prepare.py'), '')

  it('an existing script passes; a missing one is named with the folder it was looked for in', () => {
    const ok = idList('python3 tools/prepare.py --instance {instance}', 'bash ./grade.sh {out}')
    expect(missingScripts(ok, repo)).toEqual([
      {
        path: ['benchmark', 'verifier', 'command'],
        message: `./grade.sh does not exist (${path.join(repo, 'grade.sh')}): setup and verifier commands run from the current folder — the repository root in GitHub Actions — not from the manifest's folder`,
      },
    ])
    // Placeholders, variables and flags are not paths.
    expect(missingScripts(idList('python3 {workspace}/x.py $HOME/y.sh --out {out}', 'true'), repo)).toEqual(
      [],
    )
  })

  it('validate and plan throw one located error listing every missing script', () => {
    const m = idList('python3 tools/missing.py', 'bash ./grade.sh')
    let err: unknown
    try {
      assertScriptsExist(m, 'manifests/m.yml', repo, (p) => `manifests/m.yml:${p.length}:1`)
    } catch (e) {
      err = e
    }
    expect(err).toMatchObject({ code: 'manifest_invalid', message: 'manifests/m.yml: 2 script(s) not found' })
    expect((err as { details: string[] }).details).toEqual([
      expect.stringMatching(/^manifests\/m\.yml:2:1 benchmark\.setup: tools\/missing\.py does not exist/),
      expect.stringMatching(
        /^manifests\/m\.yml:3:1 benchmark\.verifier\.command: \.\/grade\.sh does not exist/,
      ),
    ])
  })
})
