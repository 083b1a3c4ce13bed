// The harness analyst from a clone under /tmp (the CLI bundle, dist/cli/index.js): the namespace
// sandbox hides /tmp except what it is given, and the package folder found from the CLI bundle is
// dist/cli (it holds its own package.json), so the Pi bridge extension could not load the MCP SDK
// client from dist/pi-bridge-sdk ("Cannot find module"). The analyst now exposes what the run stage's
// bridge exposes: the package folder and the bundled SDK client's folder.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { harnessWatchReadable, harnessWatchRoot } from '../../src/run/bridge.js'
import { BACKENDS } from '../../src/sandbox/select.js'

const root = path.resolve(import.meta.dirname, '..', '..')

/** A clone's bundles under the temp folder: dist/cli (own package.json) and dist/pi-bridge-sdk. */
function cloneUnderTmp(): { pkg: string; cli: string; sdk: string } {
  const pkg = mkdtempSync(path.join(tmpdir(), 'hw-clone-'))
  mkdirSync(path.join(pkg, 'dist', 'cli'), { recursive: true })
  writeFileSync(path.join(pkg, 'package.json'), '{"name":"harness-watch"}\n')
  writeFileSync(path.join(pkg, 'dist', 'cli', 'package.json'), '{"type":"module"}\n')
  writeFileSync(path.join(pkg, 'dist', 'cli', 'index.js'), '')
  cpSync(path.join(root, 'dist', 'pi-bridge-sdk'), path.join(pkg, 'dist', 'pi-bridge-sdk'), {
    recursive: true,
  })
  return {
    pkg,
    cli: path.join(pkg, 'dist', 'cli', 'index.js'),
    sdk: path.join(pkg, 'dist', 'pi-bridge-sdk', 'index.js'),
  }
}

describe('the analyst’s sandbox from a clone under /tmp', () => {
  it('names the CLI bundle’s folder and the SDK bundle’s folder; from source, the package alone', () => {
    const c = cloneUnderTmp()
    expect(harnessWatchRoot(c.cli)).toBe(path.join(c.pkg, 'dist', 'cli'))
    expect(harnessWatchReadable(c.cli)).toEqual([path.join(c.pkg, 'dist', 'cli'), path.dirname(c.sdk)])
    expect(harnessWatchReadable(path.join(root, 'src', 'run', 'bridge.ts'))).toEqual([root])
  })

  const ns = BACKENDS['namespace+uid']
  let skip = ''
  beforeAll(async () => {
    const p = await ns.probe()
    if (!p.ok) skip = `the namespace sandbox cannot run here: ${p.reason}`
  })

  /** Import the SDK bundle the way the Pi extension does, inside a namespace sandbox given `readOnly`. */
  async function importInSandbox(sdk: string, readOnly: string[]): Promise<{ out: string; err: string }> {
    const work = mkdtempSync(path.join(tmpdir(), 'hw-analyst-box-'))
    const ws = path.join(work, 'w')
    const home = path.join(work, 'h')
    mkdirSync(ws)
    mkdirSync(home)
    const box = await ns.open({ writable: [ws, home], readOnly })
    try {
      await box.exec(
        {
          command: process.execPath,
          args: [
            '--input-type=module',
            '-e',
            `const m = await import(${JSON.stringify(pathToFileURL(sdk).href)}); console.log(typeof m.Client, typeof m.StreamableHTTPClientTransport)`,
          ],
          cwd: ws,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
        },
        {
          timeoutMs: 60_000,
          graceMs: 2000,
          stdoutFile: path.join(work, 'out'),
          stderrFile: path.join(work, 'err'),
          sweepHome: home,
        },
      )
    } finally {
      await box.close()
    }
    return {
      out: readFileSync(path.join(work, 'out'), 'utf8'),
      err: readFileSync(path.join(work, 'err'), 'utf8'),
    }
  }

  it('in the real namespace sandbox: the package folder alone hides the SDK; with it exposed, it loads', async (t) => {
    if (skip) return t.skip(skip)
    const c = cloneUnderTmp()
    // What the analyst exposed before: the folder with the nearest package.json only.
    const before = await importInSandbox(c.sdk, [harnessWatchRoot(c.cli)])
    expect(before.out).toBe('')
    expect(before.err).toContain(`Cannot find module '${c.sdk}'`)
    const after = await importInSandbox(c.sdk, harnessWatchReadable(c.cli))
    expect(after.err).toBe('')
    expect(after.out.trim()).toBe('function function')
  }, 120_000)
})
