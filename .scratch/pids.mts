import { testBackend } from '../test/support/container.ts'
import { readPidsRefusals } from '../src/sandbox/container/limits.ts'
import { cli } from '../src/sandbox/container/runtime.ts'
import { removeLeftovers } from '../src/sandbox/container/cleanup.ts'
import { mkdirSync, readFileSync } from 'node:fs'
mkdirSync('/tmp/hw23/oom/w', { recursive: true })
const b = testBackend({ resources: { cpus: 1, memory_mb: 256, pids: 16, storage_mb: null } })
const box = await b.open({ writable: ['/tmp/hw23/oom/w'], readOnly: [], container: { phase: 'agent' } })
const rt = await b.runtime()
const ps = await cli(rt.bin, ['ps', '-a', '--format', '{{.Names}}\t{{.Labels}}'], { env: rt.env })
console.log(ps.stdout)
const name = ps.stdout.split('\n').find((n) => n.startsWith(`hw-${process.pid}`))!.split('\t')[0]
const pid = Number((await cli(rt.bin, ['inspect', '--format', '{{.State.Pid}}', name], { env: rt.env })).stdout.trim())
console.log(readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').filter(l => l.includes('pids')))
const x = await box.exec({ command: 'sh', args: ['-c', 'for i in $(seq 40); do sleep 5 & done; wait; exit 3'], cwd: '/tmp/hw23/oom/w', env: {} }, { timeoutMs: 30000, graceMs: 1000, stdoutFile: '/tmp/hw23/oom/o', stderrFile: '/tmp/hw23/oom/e' })
console.log(x, await readPidsRefusals(rt, pid), readFileSync('/tmp/hw23/oom/e', 'utf8').slice(0, 300))
await box.close()
console.log(await removeLeftovers(rt))
