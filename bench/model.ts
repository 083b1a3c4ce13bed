// Scripted model: the time to answer grows linearly with the prompt (target: a 1 MB prompt in ≤ 2 s
// on every wire API, for prose, base64 and a single repeated character — runs without spaces were
// quadratic in byte-pair encoding before).
import { randomBytes } from 'node:crypto'
import { cpus, loadavg } from 'node:os'
import { startScriptedModel } from '../src/model/server.js'

const MB = 1024 * 1024
const prompts: Record<string, (bytes: number) => string> = {
  prose: (n) => 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(n / 45)).slice(0, n),
  base64: (n) =>
    randomBytes(Math.ceil((n * 3) / 4))
      .toString('base64')
      .slice(0, n),
  repeated: (n) => 'x'.repeat(n),
}

const model = await startScriptedModel({})
let ok = true
try {
  for (const [kind, make] of Object.entries(prompts)) {
    for (const size of [MB / 4, MB / 2, MB]) {
      const content = make(size)
      const t0 = performance.now()
      const res = await fetch(`${model.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content }] }),
      })
      await res.arrayBuffer()
      const ms = performance.now() - t0
      console.log(`${kind} prompt of ${(size / MB).toFixed(2)} MB: HTTP ${res.status} in ${ms.toFixed(0)} ms`)
      if (size === MB) ok &&= res.status === 200 && ms <= 2000
    }
  }
} finally {
  await model.close()
}
console.log(`machine: load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} CPU(s)`)
console.log(ok ? 'model targets: met (1 MB prompt ≤ 2 s)' : 'model targets: NOT met')
process.exitCode = ok ? 0 : 1
