import http from 'node:http'
import { mkdirSync, writeFileSync } from 'node:fs'
import { containerBackend } from '../src/sandbox/container/backend.ts'
import { noneBackend } from '../src/sandbox/none.ts'
const srv = http.createServer((_q, r) => r.end('proxy-ok'))
await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))
const port = (srv.address() as any).port
const b = containerBackend({ runtime: 'auto', image: 'localhost/harness-watch-base:bookworm', network: 'proxy-only', resources: { cpus: 1, memory_mb: 512, pids: 256, storage_mb: null }, user: '0:0' }, async () => noneBackend)
let t = performance.now()
console.log((await b.runtime()).summary, Math.round(performance.now() - t))
const ws = '/tmp/hw23/s/w', home = '/tmp/hw23/s/h'
mkdirSync(ws, { recursive: true }); mkdirSync(home, { recursive: true })
t = performance.now()
const box = await b.open({ writable: [ws, home], readOnly: [], container: { phase: 'agent', ports: [port] } })
console.log('open', Math.round(performance.now() - t), box.provenance)
t = performance.now()
const r = await box.exec({ command: process.execPath, args: ['-e', `fetch('http://127.0.0.1:${port}').then(r=>r.text()).then(t=>{console.log(t, process.getuid(), process.cwd()); require('fs').writeFileSync('out.txt','x')})`], cwd: ws, env: { HOME: home } }, { timeoutMs: 20000, graceMs: 1000, stdoutFile: '/tmp/hw23/s/o', stderrFile: '/tmp/hw23/s/e' })
console.log('exec', Math.round(performance.now() - t), r)
t = performance.now()
await box.close()
console.log('close', Math.round(performance.now() - t))
srv.close()
