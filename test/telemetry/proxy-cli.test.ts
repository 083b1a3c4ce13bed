import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LedgerRowSchema } from '../../src/records/ledger.js'
import { startUpstream, type TestUpstream } from './support/upstream.js'

const ROOT = path.resolve(__dirname, '../..')

function startCli(
  args: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; origin: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/entry.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const origin = new Promise<string>((resolve, reject) => {
    let out = ''
    let err = ''
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
      if (m) resolve(m[1] as string)
    })
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString()
    })
    child.once('exit', (code) => reject(new Error(`proxy exited ${code}: ${err}`)))
  })
  origin.catch(() => {}) // a test that expects the exit awaits `exited` instead
  return { child, origin }
}

function exited(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = ''
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })))
}

let upstream: TestUpstream
let dir: string
beforeAll(async () => {
  upstream = await startUpstream()
  dir = await mkdtemp(path.join(tmpdir(), 'hw-proxy-cli-'))
})
afterAll(async () => {
  await upstream.close()
  await rm(dir, { recursive: true, force: true })
})

describe('harness-watch proxy', () => {
  it('serves until SIGTERM, attributes by path prefix, swaps in the --key-env key and appends rows', async () => {
    const ledger = path.join(dir, 'ledger.jsonl')
    const { child, origin } = startCli(
      [
        'proxy',
        '--upstream',
        upstream.origin,
        '--port',
        '0',
        '--ledger',
        ledger,
        '--key-env',
        'HW_TEST_UPSTREAM_KEY',
      ],
      { HW_TEST_UPSTREAM_KEY: 'sk-real-from-env' },
    )
    const done = exited(child)
    const base = await origin
    const res = await fetch(`${base}/a/cell-x:inst-9:0:2/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-anything', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-model', messages: [] }),
    })
    expect(res.status).toBe(200)
    await res.text()
    const anon = await fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'whatever', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-x', messages: [], max_tokens: 5 }),
    })
    expect(anon.status).toBe(200)
    await anon.text()
    expect(upstream.calls.at(-2)?.headers.authorization).toBe('Bearer sk-real-from-env')
    expect(upstream.calls.at(-2)?.path).toBe('/v1/chat/completions')
    expect(upstream.calls.at(-1)?.headers['x-api-key']).toBe('sk-real-from-env')
    child.kill('SIGTERM')
    const { code, stderr } = await done
    expect(code).toBe(0)
    expect(stderr).toContain('2 request(s) recorded')
    const rows = (await readFile(ledger, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => LedgerRowSchema.parse(JSON.parse(l)))
    expect(rows).toHaveLength(2)
    expect(rows[0]?.attribution).toMatchObject({
      cell_id: 'cell-x',
      instance_id: 'inst-9',
      trial: 0,
      attempt: 2,
    })
    expect(rows[1]?.attribution).toBeNull()
    expect(rows[1]?.tokens.input_total).toBe(100)
    expect(await readFile(ledger, 'utf8')).not.toContain('sk-real-from-env')
  })

  it('is a usage error when --key-env names an unset variable', async () => {
    const { child } = startCli([
      'proxy',
      '--upstream',
      upstream.origin,
      '--ledger',
      path.join(dir, 'x.jsonl'),
      '--key-env',
      'HW_TEST_UNSET_VAR',
    ])
    const { code, stderr } = await exited(child)
    expect(code).toBe(2)
    expect(stderr).toContain('HW_TEST_UNSET_VAR')
  })
})
