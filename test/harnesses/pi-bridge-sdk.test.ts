import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { bundledSdk, piBridgeSource, sdkModules } from '../../src/harnesses/pi-bridge.js'
import { bridgeSandboxPaths, bridgeStdioEndpoint } from '../../src/run/bridge.js'

const root = path.resolve(import.meta.dirname, '..', '..')
const bundle = path.join(root, 'dist', 'pi-bridge-sdk', 'index.js')
const envFile = path.join(root, 'manifests/panels/bridge-tools/tools-math-lcm/environment/bridge.json')

describe('the Pi bridge extension loads the bundled MCP SDK client (no node_modules needed)', () => {
  it('finds dist/pi-bridge-sdk from source, from the action bundle and from the CLI bundle', () => {
    expect(existsSync(bundle)).toBe(true)
    expect(bundledSdk(path.join(root, 'src', 'harnesses', 'pi-bridge.ts'))).toBe(bundle)
    expect(bundledSdk(path.join(root, 'dist', 'index.js'))).toBe(bundle)
    expect(bundledSdk(path.join(root, 'dist', 'cli', 'index.js'))).toBe(bundle)
    expect(sdkModules()).toEqual({ kind: 'bundle', file: bundle })
    // nothing above /: no bundle, and the SDK cannot be resolved from there either
    expect(bundledSdk('/nowhere/x.js')).toBeNull()
    expect(() => sdkModules('/nowhere/x.js')).toThrow(/neither the bundled MCP SDK client/)
  })

  it('the sandbox exposes the bundle and the task environment, never the rest of the package', () => {
    const spec = { envFile, stateDir: '/tmp/state' }
    const envDir = path.dirname(envFile)
    // the CLI bundle: dist/cli holds its own package.json, so the bundle and the panel lie outside it
    const fromCli = bridgeSandboxPaths(spec, path.join(root, 'dist', 'cli', 'index.js'))
    expect(fromCli.readOnly).toEqual([path.join(root, 'dist', 'cli'), path.dirname(bundle), envDir])
    const fromAction = bridgeSandboxPaths(spec, path.join(root, 'dist', 'index.js'))
    expect(fromAction.readOnly).toEqual([path.join(root, 'dist'), envDir])
    expect(fromAction.readOnly.some((d) => d === path.join(root, 'manifests'))).toBe(false)
    // from source the package folder holds all three
    expect(bridgeSandboxPaths(spec, path.join(root, 'src', 'run', 'bridge.ts')).readOnly).toEqual([root])
    expect(fromAction.writable).toEqual(['/tmp/state'])
  })

  it('a copy of the bundle outside any node_modules lists and calls the real bridge’s tools over stdio', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-pi-sdk-'))
    cpSync(path.dirname(bundle), path.join(dir, 'sdk'), { recursive: true })
    const state = mkdtempSync(path.join(tmpdir(), 'hw-pi-sdk-state-'))
    const endpoint = bridgeStdioEndpoint({ envFile, stateDir: state }, dir)
    // The generated extension, run with a host object recording what it registers.
    const ext = path.join(dir, 'ext.mjs')
    const source = piBridgeSource(endpoint, { kind: 'bundle', file: path.join(dir, 'sdk', 'index.js') })
    expect(source).not.toContain('createRequire')
    writeFileSync(ext, source)
    const host = `
      const tools = []
      const handlers = {}
      const pi = { registerTool: (t) => tools.push(t), on: (e, f) => { handlers[e] = f } }
      const mod = await import(${JSON.stringify(pathToFileURL(ext).href)})
      await mod.default(pi)
      const names = tools.map((t) => t.name).sort()
      const lcm = tools.find((t) => t.name.endsWith('lcm'))
      const out = lcm ? await lcm.execute('1', { numbers: [4, 6] }) : null
      await handlers.session_shutdown()
      console.log(JSON.stringify({ names, out }))
    `
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', host], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    })
    expect(r.stderr).not.toMatch(/Cannot find (module|package)/)
    expect(r.status).toBe(0)
    const got = JSON.parse(r.stdout.trim().split('\n').pop()!)
    expect(got.names.length).toBeGreaterThan(0)
    expect(got.names.every((n: string) => n.startsWith('bridge_'))).toBe(true)
    expect(got.names).toContain('bridge_lcm')
    expect(got.out.content[0].type).toBe('text')
    // the bridge recorded the call the extension forwarded, arguments verbatim (by their hash)
    const call = JSON.parse(readFileSync(path.join(state, 'calls.jsonl'), 'utf8').trim())
    expect(call).toMatchObject({ tool: 'lcm', status: 'ok' })
    expect(call.args_sha256).toBe(createHash('sha256').update('{"numbers":[4,6]}').digest('hex'))
  }, 90_000)
})
