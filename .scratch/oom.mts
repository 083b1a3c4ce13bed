import { testBackend } from '../test/support/container.ts'
import { readOomKills } from '../src/sandbox/container/limits.ts'
import { cli } from '../src/sandbox/container/runtime.ts'
import { mkdirSync } from 'node:fs'
mkdirSync('/tmp/hw23/oom/w', { recursive: true })
const b = testBackend({ resources: { cpus: 1, memory_mb: 64, pids: 16, storage_mb: null } })
const box = await b.open({ writable: ['/tmp/hw23/oom/w'], readOnly: [], container: { phase: 'agent' } })
const rt = await b.runtime()
console.log(rt)
const ps = await cli(rt.bin, ['ps', '--format', '{{.Names}}'], { env: rt.env })
const name = ps.stdout.split('\n').find((n) => n.startsWith(`hw-${process.pid}`))!
const r = await cli(rt.bin, ['inspect', '--format', '{{.State.Pid}}', name], { env: rt.env })
console.log(name, r)
console.log(await readOomKills(rt, Number(r.stdout.trim())))
await box.close()
const box2 = await b.open({ writable: ['/tmp/hw23/oom/w'], readOnly: [], container: { phase: 'agent' } })
const ps2 = await cli(rt.bin, ['ps', '--format', '{{.Names}}'], { env: rt.env })
const name2 = ps2.stdout.split('\n').find((n) => n.startsWith(`hw-${process.pid}`))!
const pid2 = Number((await cli(rt.bin, ['inspect', '--format', '{{.State.Pid}}', name2], { env: rt.env })).stdout.trim())
const x = await box2.exec({ command: 'python3', args: ['-c', 'b = bytearray(512 * 1024 * 1024)'], cwd: '/tmp/hw23/oom/w', env: {} }, { timeoutMs: 30000, graceMs: 1000, stdoutFile: '/tmp/hw23/oom/o', stderrFile: '/tmp/hw23/oom/e' })
console.log(x, await readOomKills(rt, pid2), (await cli(rt.bin, ['ps', '-a', '--format', '{{.Names}} {{.Status}}'], { env: rt.env })).stdout)
await box2.close()
