import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseManifestText } from '../../src/manifest/load.js'
import { MAX_BACKOFF_S } from '../../src/manifest/schema.js'
import { startScriptedModel } from '../../src/model/server.js'
import { runHarnessProcess, runProcessGroup } from '../../src/process/exec.js'
import { backoffSeconds } from '../../src/run/outcome.js'
import { waitForQuiescence } from '../../src/telemetry/litellm/quiesce.js'
import { MAX_TIMER_MS, MAX_TIMER_S } from '../../src/util/duration.js'
import { HwError } from '../../src/util/errors.js'
import { baseManifest } from '../support/manifests.js'

/** Every duration field of a manifest, the largest value it accepts and the smallest it refuses. */
const DURATIONS: { path: string[]; max: number; over: number }[] = [
  { path: ['budgets', 'timeout_s'], max: MAX_TIMER_S, over: MAX_TIMER_S + 0.5 },
  { path: ['benchmark', 'verifier', 'timeout_s'], max: MAX_TIMER_S, over: 3_000_000 },
  { path: ['retries', 'backoff_s'], max: MAX_BACKOFF_S, over: MAX_BACKOFF_S + 1 },
  { path: ['telemetry', 'litellm', 'settle_s'], max: MAX_TIMER_S, over: MAX_TIMER_S + 1 },
  { path: ['telemetry', 'litellm', 'max_wait_s'], max: MAX_TIMER_S, over: MAX_TIMER_S + 1 },
  { path: ['model', 'scripted', 'latency_ms'], max: MAX_TIMER_MS, over: MAX_TIMER_MS + 1 },
]

function withValue(p: string[], v: number): string {
  const m = baseManifest({ retries: { max: 10, on: ['infra'] } }) as Record<string, unknown>
  if (p[0] === 'benchmark') (m.benchmark as Record<string, unknown>).verifier = { kind: 'task-tests' }
  let node = m
  for (const k of p.slice(0, -1)) {
    node[k] ??= {}
    node = node[k] as Record<string, unknown>
  }
  node[p[p.length - 1] as string] = v
  return JSON.stringify(m)
}

// A timer longer than 2^31-1 ms fires after 1 ms with a TimeoutOverflowWarning: none may be raised.
const warnings: string[] = []
const onWarning = (w: Error): void => {
  warnings.push(w.name)
}
beforeEach(() => {
  warnings.length = 0
  process.on('warning', onWarning)
})
afterEach(() => {
  process.off('warning', onWarning)
})

describe('every duration a manifest accepts is one a timer honours', () => {
  for (const d of DURATIONS) {
    it(`${d.path.join('.')}: ${d.max} is accepted, ${d.over} refused with the range`, () => {
      expect(() => parseManifestText(withValue(d.path, d.max), 'm.json')).not.toThrow()
      let err: unknown
      try {
        parseManifestText(withValue(d.path, d.over), 'm.json')
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(HwError)
      const detail = (err as HwError).details.join('\n')
      expect(detail).toContain(d.path.join('.'))
      expect(detail).toMatch(/at most \d+ m?s/)
      expect(detail).toMatch(/^m\.json:\d+:\d+ /)
    })
  }

  it('an attempt at the largest timeout_s runs to its end instead of timing out after 1 ms', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-dur-'))
    const r = await runHarnessProcess(
      { command: 'sh', args: ['-c', 'sleep 0.2'], cwd: dir, env: { PATH: process.env.PATH ?? '' } },
      {
        timeoutMs: MAX_TIMER_S * 1000,
        graceMs: 100,
        stdoutFile: path.join(dir, 'o'),
        stderrFile: path.join(dir, 'e'),
      },
    )
    expect(r.timedOut).toBe(false)
    expect(r.exitCode).toBe(0)
    expect(r.durationMs).toBeGreaterThanOrEqual(150)
    expect(warnings).toEqual([])
  })

  it('a verifier at the largest timeout_s runs to its end', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-dur-'))
    const r = await runProcessGroup('sh', ['-c', 'sleep 0.2'], { cwd: dir, timeoutMs: MAX_TIMER_S * 1000 })
    expect(r.timedOut).toBe(false)
    expect(r.exitCode).toBe(0)
    expect(warnings).toEqual([])
  })

  it('the last retry backoff at the largest backoff_s is a wait a timer honours', async () => {
    const ms = backoffSeconds(10, MAX_BACKOFF_S) * 1000
    expect(ms).toBeLessThanOrEqual(MAX_TIMER_MS)
    const ac = new AbortController()
    const waited = sleep(ms, 'done', { signal: ac.signal }).catch(() => 'aborted')
    const first = await Promise.race([waited, sleep(100, 'still waiting')])
    ac.abort()
    expect(first).toBe('still waiting')
    expect(warnings).toEqual([])
  })

  it('LiteLLM quiescence at the largest settle_s and max_wait_s keeps waiting', async () => {
    const ac = new AbortController()
    let probes = 0
    const waiting = waitForQuiescence(
      async () => {
        probes++
        if (probes > 3) ac.abort()
        return { rows: probes, spendUsd: 0 }
      },
      { settleMs: MAX_TIMER_S * 1000, maxWaitMs: MAX_TIMER_S * 1000, pollMs: 10 },
    )
    const first = await Promise.race([waiting.then(() => 'returned'), sleep(150, 'still waiting')])
    expect(first).toBe('still waiting')
    expect(probes).toBeGreaterThan(3)
    expect(warnings).toEqual([])
  })

  it('the scripted model at the largest latency_ms has not answered after 300 ms', async () => {
    const model = await startScriptedModel({ config: { latency_ms: MAX_TIMER_MS } })
    try {
      const ac = new AbortController()
      const req = fetch(`${model.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
        signal: ac.signal,
      }).then(
        () => 'answered',
        () => 'aborted',
      )
      const first = await Promise.race([req, sleep(300, 'still waiting')])
      ac.abort()
      expect(first).toBe('still waiting')
      expect(warnings).toEqual([])
    } finally {
      await model.close()
    }
  })
})
