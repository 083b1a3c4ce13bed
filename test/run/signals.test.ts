import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { execa } from 'execa'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Isolation } from '../../src/records/isolation.js'
import { BACKENDS } from '../../src/sandbox/select.js'
import { manifestAndPlan, readAttempts, readLedger, readLegJson, useRunFixture } from './fixture.js'
import { sleeps, treeCommand, uniqueMark, waitFor } from './tree.js'

// SIGINT/SIGTERM to `harness-watch run` (issue 11 point 3): a real CLI process running a real
// harness tree — a child, a background child and a `setsid nohup` grandchild that left the group, all
// ignoring SIGTERM — gets a real signal; it must kill the whole tree, record the stopped attempt,
// write leg.json and exit 130, printing its message once.

const fx = useRunFixture()
const root = path.resolve(import.meta.dirname, '../..')
const tsx = path.join(root, 'node_modules', '.bin', 'tsx')
const entry = path.join(root, 'src', 'cli', 'entry.ts')

async function startRun(backend: Isolation, name: string, mark: string) {
  const cell = { id: 'tree', harness: 'command', version: '1.0.0', config: { command: treeCommand(mark) } }
  const { file, plan } = await manifestAndPlan(
    fx,
    [cell],
    {
      panel: { source: 'tasks', path: './panel', instances: ['js-add', 'txt-greet'] },
      budgets: { timeout_s: 600 },
      sandbox: { backend, allow_unisolated: backend !== 'namespace+uid' },
    },
    `${name}.yml`,
  )
  const planFile = path.join(fx.root, `${name}.plan.json`)
  writeFileSync(planFile, JSON.stringify(plan))
  const out = path.join(fx.root, 'out', name)
  const child = execa(
    tsx,
    [entry, 'run', file, '--plan', planFile, '--leg', 'tree-s0', '--out', out, '--work-root', fx.work],
    { reject: false, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, extendEnv: false, timeout: 120_000 },
  )
  return { child, out }
}

let nsOk = false
beforeAll(async () => {
  nsOk = (await BACKENDS['namespace+uid'].probe()).ok
})

describe('a signal to `run` stops every attempt', () => {
  for (const [backend, sig] of [
    ['env-only', 'SIGTERM'],
    ['namespace+uid', 'SIGINT'],
  ] as const) {
    it(`${backend}, ${sig}: kills the whole tree, records the attempt as stopped, writes leg.json, exits 130`, async (ctx) => {
      if (backend === 'namespace+uid' && !nsOk) {
        ctx.skip('namespace+uid is not available here (needs root or passwordless sudo)')
        return
      }
      const mark = uniqueMark(4000)
      const name = `${backend.replace('+', '-')}-${sig}`
      const { child, out } = await startRun(backend, name, mark)
      // All three sleeps of the tree are running.
      expect(await waitFor(() => sleeps(mark).length >= 3, 60_000)).toBe(true)
      child.kill(sig)
      const r = await child
      expect(r.timedOut).toBe(false)
      expect(r.exitCode).toBe(130)
      expect(r.stderr.match(/stopping: /g)).toHaveLength(1)
      // Nothing of the tree survives, the setsid+nohup grandchild included.
      expect(await waitFor(() => sleeps(mark).length === 0, 5000)).toBe(true)
      const records = readAttempts(out)
      expect(records).toHaveLength(1)
      expect(records[0]).toMatchObject({
        instance_id: 'js-add',
        attempt: 1,
        final: false,
        exit: { class: 'infra', reason: `stopped: received ${sig}` },
        outcome: 'infra_error',
        isolation: backend,
      })
      const leg = readLegJson(out)
      expect(leg).toMatchObject({ status: 'partial', error: 'aborted', attempts: 1 })
      expect(leg.ended_at).not.toBeNull()
    }, 120_000)
  }

  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`${sig} with requests in flight, one of them a 20,000-level nested body: exits 130 promptly, both recorded`, async () => {
      const mark = uniqueMark(6000)
      const send = (body: string) =>
        `fetch(process.env.HW_OPENAI_BASE_URL + '/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.HW_API_KEY }, body: ${body} }).catch(() => {});`
      const js = [
        send(
          `'{"model":"test-model","messages":[{"role":"system","content":' + '['.repeat(20000) + ']'.repeat(20000) + '}]}'`,
        ),
        send(`'{"model":"test-model","messages":[{"role":"user","content":"plain"}]}'`),
        'setInterval(() => {}, 1000)',
      ].join(' ')
      const cell = {
        id: 'inflight',
        harness: 'command',
        version: '1.0.0',
        config: { command: `node -e ${JSON.stringify(js)} &\nsleep ${mark} &\nwait` },
      }
      const name = `inflight-${sig}`
      const { file, plan } = await manifestAndPlan(
        fx,
        [cell],
        {
          model: {
            id: 'test-model',
            provider: 'scripted',
            api: 'chat',
            prices: { input: 1, output: 2 },
            // Every request hangs upstream: both stay in flight until the stop.
            scripted: { faults: { rate_429: 0, rate_500: 0, hang_rate: 1 } },
          },
          panel: { source: 'tasks', path: './panel', instances: ['js-add'] },
          budgets: { timeout_s: 600 },
        },
        `${name}.yml`,
      )
      const planFile = path.join(fx.root, `${name}.plan.json`)
      writeFileSync(planFile, JSON.stringify(plan))
      const out = path.join(fx.root, 'out', name)
      const child = execa(
        tsx,
        [
          entry,
          'run',
          file,
          '--plan',
          planFile,
          '--leg',
          'inflight-s0',
          '--out',
          out,
          '--work-root',
          fx.work,
        ],
        {
          reject: false,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
          extendEnv: false,
          timeout: 90_000,
        },
      )
      expect(await waitFor(() => sleeps(mark).length >= 1, 60_000)).toBe(true)
      // Both requests reach the proxy (two rows once stopped) well within this pause.
      await new Promise((r) => setTimeout(r, 2000))
      const stoppedAt = Date.now()
      child.kill(sig)
      const r = await child
      expect(r.timedOut).toBe(false)
      expect(r.exitCode).toBe(130)
      expect(Date.now() - stoppedAt).toBeLessThan(30_000)
      expect(r.stderr).not.toMatch(/RangeError|could not be built/)
      const rows = readLedger(out)
      expect(rows).toHaveLength(2)
      for (const row of rows) expect(row.status).toBe('failure')
      const nested = rows.find((row) => row.flags.includes('request_unsummarized'))
      expect(nested?.request_shape?.messages).toBe(1)
    }, 120_000)
  }

  it('a second signal kills at once and exits 130', async () => {
    const mark = uniqueMark(5000)
    const { child } = await startRun('env-only', 'twice', mark)
    expect(await waitFor(() => sleeps(mark).length >= 3, 60_000)).toBe(true)
    child.kill('SIGINT')
    child.kill('SIGINT')
    const r = await child
    expect(r.exitCode).toBe(130)
    expect(await waitFor(() => sleeps(mark).length === 0, 5000)).toBe(true)
  }, 120_000)
})
