import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { describe, expect, it } from 'vitest'
import { packageRoot } from '../../src/util/paths.js'

/**
 * Two SWE-bench style files over `n` instances with a cost for each: large enough that the paired
 * bootstrap sums run on the second thread.
 */
function files(n: number): { dir: string; a: string; b: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-cli-exit-'))
  const ids = Array.from({ length: n }, (_, i) => `repo__pkg-${i}`)
  const write = (name: string, solved: (i: number) => boolean, usd: (i: number) => number) => {
    const file = path.join(dir, name)
    writeFileSync(
      file,
      JSON.stringify({
        system: name,
        resolved: ids.filter((_, i) => solved(i)),
        cost_usd: Object.fromEntries(ids.map((id, i) => [id, usd(i)])),
        n_total: n,
      }),
    )
    return file
  }
  return {
    dir,
    a: write(
      'a.json',
      (i) => i % 3 !== 0,
      (i) => 0.5 + (i % 7) / 10,
    ),
    b: write(
      'b.json',
      (i) => i % 4 !== 0,
      (i) => 0.4 + (i % 5) / 10,
    ),
  }
}

describe('the bundled CLI exits when its work is done', () => {
  it('compare on 300 instances with 10,000 resamples writes its outputs and exits 0', async () => {
    const f = files(300)
    const out = path.join(f.dir, 'out')
    const r = await execa(
      process.execPath,
      [
        path.join(packageRoot(), 'bin/harness-watch.js'),
        'compare',
        '--baseline',
        f.a,
        '--treatment',
        f.b,
        '--out',
        out,
      ],
      // Generous: the comparison itself takes about a second; a process kept alive by an open
      // message port would run into this limit instead of exiting.
      { reject: false, timeout: 90_000 },
    )
    expect(r.timedOut).toBe(false)
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('W/L/T')
    expect(r.stdout).toContain(`wrote ${path.join(out, 'comparison.json')}`)
  })
})
