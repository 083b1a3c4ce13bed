// Start-up overhead of a sandbox per attempt: open + exec `true` + close, namespace+uid against
// env-only (same command, same machine). `npm run bench -- sandbox`. Skips namespace+uid where it
// does not probe ok (needs Linux and root or passwordless sudo).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import type { HostIsolation } from '../src/sandbox/select.js'
import { BACKENDS } from '../src/sandbox/select.js'

const ROUNDS = 15
/** Target: the namespace adds well under a second per attempt (harness attempts take minutes). */
const TARGET_MS = 1000

const dir = mkdtempSync(path.join(os.tmpdir(), 'hw-bench-sbx-'))

async function timeBackend(kind: HostIsolation): Promise<{ open: number; exec: number; close: number }[]> {
  const out: { open: number; exec: number; close: number }[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const ws = path.join(dir, `${kind}-${i}`, 'w')
    const home = path.join(dir, `${kind}-${i}`, 'h')
    mkdirSync(ws, { recursive: true })
    mkdirSync(home, { recursive: true })
    const t0 = performance.now()
    const box = await BACKENDS[kind].open({ writable: [ws, home], readOnly: [] })
    const t1 = performance.now()
    await box.exec(
      { command: 'true', args: [], cwd: ws, env: { PATH: '/usr/bin:/bin', HOME: home } },
      {
        timeoutMs: 30_000,
        graceMs: 1000,
        stdoutFile: path.join(ws, '..', 'o'),
        stderrFile: path.join(ws, '..', 'e'),
      },
    )
    const t2 = performance.now()
    await box.close()
    out.push({ open: t1 - t0, exec: t2 - t1, close: performance.now() - t2 })
  }
  return out
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}

let failed = false
try {
  const probe = await BACKENDS['namespace+uid'].probe()
  const base = await timeBackend('env-only')
  const baseTotal = median(base.map((r) => r.open + r.exec + r.close))
  console.log(
    `env-only:      median ${baseTotal.toFixed(1)} ms per attempt (open+exec true+close, ${ROUNDS} rounds)`,
  )
  if (!probe.ok) {
    console.log(`namespace+uid: skipped (${probe.reason})`)
  } else {
    const ns = await timeBackend('namespace+uid')
    const total = median(ns.map((r) => r.open + r.exec + r.close))
    console.log(
      `namespace+uid: median ${total.toFixed(1)} ms per attempt (open ${median(ns.map((r) => r.open)).toFixed(1)}, exec ${median(ns.map((r) => r.exec)).toFixed(1)}, close ${median(ns.map((r) => r.close)).toFixed(1)})`,
    )
    const overhead = total - baseTotal
    console.log(`overhead:      ${overhead.toFixed(1)} ms per attempt (target < ${TARGET_MS} ms)`)
    if (overhead >= TARGET_MS) failed = true
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
