// The measurement plane's cost. Run: npx tsx bench/telemetry.ts [seconds-per-phase]
// 1. Recording proxy vs the upstream directly, in one run: added latency p50/p99 (sequential requests,
//    non-stream and SSE stream), the proxy's CPU per request, and throughput of closed-loop clients
//    against three upstreams:
//    - 200 ms per answer, 64 clients: a fast provider (real first tokens take 0.3-1 s) at eight times
//      the concurrency a leg runs. The target is judged here.
//    - 20 ms per answer, 16 clients: a stress case. Every answer of a burst waits for the ones before
//      it on a shared 2-core machine, so this measures the machine as much as the proxy: a bare
//      node:http forwarder with no telemetry is measured beside it as the ceiling.
//    - instant answers, 32 clients: CPU-bound, the proxy's worst case (information only).
//    Upstream and proxy each run in their own process; requests are 30 KB chat bodies like a harness's
//    first one. Targets: ≤ 1 ms added at p50; proxied throughput ≥ 90% of direct (200 ms upstream).
// 2. LiteLLM capture of 10,000 spend-log rows from the local fake (page_size 1000). Target: ≤ 5 s.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { cpus, loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
import type { ModelRoute } from '../src/manifest/schema.js'
import { openLiteLLMCapture } from '../src/telemetry/litellm/capture.js'
import { RecordingProxy } from '../src/telemetry/proxy.js'
import { FakeLiteLLM, hashKey } from '../test/telemetry/support/fake-litellm.js'

const role = process.argv.includes('--role') ? process.argv[process.argv.indexOf('--role') + 1] : 'main'

// ---------- child roles ----------

const USAGE = {
  prompt_tokens: 7700,
  completion_tokens: 40,
  total_tokens: 7740,
  prompt_tokens_details: { cached_tokens: 4096 },
}

async function serveUpstream(): Promise<void> {
  const answer = JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    model: 'bench-model-2026-01-01',
    choices: [{ index: 0, message: { role: 'assistant', content: 'x'.repeat(300) }, finish_reason: 'stop' }],
    usage: USAGE,
  })
  const chunk = (i: number): string =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', model: 'bench-model-2026-01-01', choices: [{ index: 0, delta: { content: `tok${i} ` }, finish_reason: null }] })}\n\n`
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const parts: Buffer[] = []
    req.on('data', (c: Buffer) => parts.push(c))
    req.on('end', async () => {
      // A real server reads the request; so does this one.
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { stream?: boolean }
      const delay = Number(req.headers['x-bench-delay-ms'] ?? 0)
      if (delay > 0) await new Promise((r) => setTimeout(r, delay))
      if (!body.stream) {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(answer),
        })
        res.end(answer)
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      for (let i = 0; i < 20; i++) res.write(chunk(i))
      res.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', model: 'bench-model-2026-01-01', choices: [], usage: USAGE })}\n\n`,
      )
      res.end('data: [DONE]\n\n')
    })
  })
  server.listen(0, '127.0.0.1', () =>
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`),
  )
}

async function serveProxy(upstream: string, ledger: string): Promise<void> {
  const proxy = await RecordingProxy.start({
    upstream,
    route: { provider: 'openai', prices: { input: 1.75, output: 14, cache_read: 0.175, cache_write: null } },
    ledgerFile: ledger,
    runId: 'bench',
    experimentId: 'bench',
    standalone: true,
  })
  process.stdout.write(`listening ${new URL(proxy.origin).port}\n`)
  process.once('SIGTERM', () => void proxy.close().then(() => process.exit(0)))
}

/** The ceiling for any Node forwarder here: a bare node:http pass-through with no telemetry. */
async function serveBare(upstream: string): Promise<void> {
  const target = new URL(upstream)
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY })
  const server = http.createServer({ keepAliveTimeout: 60_000, noDelay: true }, (req, res) => {
    const parts: Buffer[] = []
    req.on('data', (c: Buffer) => parts.push(c))
    req.on('end', () => {
      const headers = { ...req.headers }
      delete headers.connection
      delete headers.host
      const up = http.request(
        { hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers)
          upRes.pipe(res)
        },
      )
      up.end(Buffer.concat(parts))
    })
  })
  process.once('SIGTERM', () => process.exit(0))
  server.listen(0, '127.0.0.1', () =>
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`),
  )
}

// ---------- main ----------

function startChild(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const prof =
    process.env.HW_BENCH_PROFILE && args[1] === 'proxy'
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.HW_BENCH_PROFILE}`]
      : []
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', import.meta.filename, ...args], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /listening (\d+)/.exec(out)
      if (m) resolve({ child, port: Number(m[1]) })
    })
    child.once('exit', (code) => reject(new Error(`child ${args.join(' ')} exited ${code}`)))
  })
}

function requestBody(stream: boolean): string {
  // ~30 KB: a system prompt, 10 tool schemas and two messages, like OpenCode's first request.
  const tools = Array.from({ length: 10 }, (_, i) => ({
    type: 'function',
    function: {
      name: `tool_${i}`,
      description: 'd'.repeat(1500),
      parameters: { type: 'object', properties: { a: { type: 'string' } } },
    },
  }))
  return JSON.stringify({
    model: 'bench-model',
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    messages: [
      { role: 'system', content: 's'.repeat(9800) },
      { role: 'user', content: 'Fix the failing test in src/app.ts.' },
    ],
    tools,
  })
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })

/** One request; resolves with [ttfb ms, total ms]. */
function once(port: number, body: string, delayMs = 0): Promise<[number, number]> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: 'Bearer sk-bench',
          'x-bench-delay-ms': String(delayMs),
        },
      },
      (res) => {
        let first = -1
        res.on('data', () => {
          if (first < 0) first = performance.now() - t0
        })
        res.on('end', () => resolve([first, performance.now() - t0]))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number
}

/** Sequential latency, direct and proxied interleaved request by request so drift hits both alike. */
async function latency(direct: number, proxied: number, stream: boolean, n: number) {
  const body = requestBody(stream)
  const d: number[] = []
  const p: number[] = []
  const dFirst: number[] = []
  const pFirst: number[] = []
  for (let i = 0; i < 200; i++) {
    await once(direct, body)
    await once(proxied, body)
  }
  for (let i = 0; i < n; i++) {
    const [df, dt] = await once(direct, body)
    const [pf, pt] = await once(proxied, body)
    d.push(dt)
    p.push(pt)
    dFirst.push(df)
    pFirst.push(pf)
  }
  return {
    directP50: pct(d, 50),
    proxiedP50: pct(p, 50),
    addedP50: pct(p, 50) - pct(d, 50),
    addedP99: pct(p, 99) - pct(d, 99),
    addedFirstByteP50: pct(pFirst, 50) - pct(dFirst, 50),
  }
}

/**
 * Requests per ms of `concurrency` closed-loop clients, each sending requests back to back until `ms`
 * have passed. A client's rate is its completed requests over the time to its last completion (not the
 * nominal `ms`: counting whole requests against a fixed window quantises a 20 ms exchange to 1/12 of
 * the result); the slice's rate is the sum over clients.
 */
async function slice(
  port: number,
  body: string,
  ms: number,
  concurrency: number,
  delayMs: number,
  jitterSeed: number | null,
): Promise<number> {
  const t0 = performance.now()
  const end = t0 + ms
  const rates = await Promise.all(
    Array.from({ length: concurrency }, async (_, client) => {
      // Answer times vary like a real model's, uniform on ±50% of delayMs; a client's k-th request
      // asks for the same time in the direct and the proxied slice of a pair.
      const rng = jitterSeed === null ? null : xoroshiro128plus(jitterSeed * 1000 + client)
      let done = 0
      let last = t0
      while (performance.now() < end) {
        await once(port, body, rng ? (delayMs * (500 + uniformInt(rng, 0, 1000))) / 1000 : delayMs)
        done++
        last = performance.now()
      }
      return done / (last - t0)
    }),
  )
  return rates.reduce((a, b) => a + b, 0)
}

/**
 * Requests per second, direct and proxied, measured in alternating slices (250 ms, or ten answers'
 * time when longer) so that other load on the machine falls on both alike.
 */
async function throughput(
  direct: number,
  proxied: number,
  stream: boolean,
  seconds: number,
  concurrency: number,
  delayMs = 0,
  jitter = false,
): Promise<{ direct: number; proxied: number; share: number }> {
  const body = requestBody(stream)
  const sliceMs = Math.max(250, 10 * delayMs)
  let d = 0
  let p = 0
  const slices = Math.max(2, Math.round((seconds * 1000) / (2 * sliceMs)))
  for (let i = 0; i < slices; i++) {
    d += await slice(direct, body, sliceMs, concurrency, delayMs, jitter ? i : null)
    p += await slice(proxied, body, sliceMs, concurrency, delayMs, jitter ? i : null)
  }
  return { direct: (d / slices) * 1000, proxied: (p / slices) * 1000, share: p / d }
}

function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (m) => {
      const u = m as NodeJS.CpuUsage
      resolve(u.user + u.system)
    })
    child.send('cpu')
  })
}

/** CPU µs per proxied request spent by the upstream and by the proxy (2,000 requests, 8 clients). */
async function cpuPerRequest(up: ChildProcess, px: ChildProcess, port: number, stream: boolean, n = 2000) {
  const body = requestBody(stream)
  const u0 = await cpuOf(up)
  const p0 = await cpuOf(px)
  let left = n
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (left-- > 0) await once(port, body)
    }),
  )
  const u1 = await cpuOf(up)
  const p1 = await cpuOf(px)
  return { upstreamUs: (u1 - u0) / n, proxyUs: (p1 - p0) / n }
}

async function litellmCapture(): Promise<{ ms: number; rows: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-bench-litellm-'))
  const fake = await new FakeLiteLLM().start()
  const route: ModelRoute = { id: 'gpt-test', provider: 'openai', api: 'chat', base_url_env: 'X' }
  const capture = await openLiteLLMCapture({
    baseUrl: fake.origin,
    masterKey: fake.masterKey,
    settings: {
      base_url_env: 'X',
      master_key_env: 'Y',
      attribution: 'virtual-key',
      settle_s: 0,
      max_wait_s: 30,
      tolerance_usd: 0.0001,
      page_size: 1000,
    },
    route,
    runId: 'bench',
    experimentId: 'bench',
    ledgerFile: path.join(dir, 'ledger.jsonl'),
    frontProxy: false,
  })
  const attribution = {
    experiment_id: 'bench',
    run_id: 'bench',
    cell_id: 'c',
    instance_id: 'i',
    trial: 0,
    attempt: 1,
  }
  const t = await capture.begin(attribution, {})
  fake.seedRows(hashKey(t.endpoint.apiKey), 10_000, Date.now(), 1)
  const t0 = performance.now()
  const { rows } = await t.finish()
  const ms = performance.now() - t0
  await capture.close()
  await fake.close()
  rmSync(dir, { recursive: true, force: true })
  return { ms, rows: rows.length }
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 3)
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-bench-proxy-'))
  const up = await startChild(['--role', 'upstream'])
  const px = await startChild([
    '--role',
    'proxy',
    '--upstream',
    `http://127.0.0.1:${up.port}`,
    '--ledger',
    path.join(dir, 'ledger.jsonl'),
  ])
  const bare = await startChild(['--role', 'bare', '--upstream', `http://127.0.0.1:${up.port}`])
  const f = (x: number): string => x.toFixed(3)
  try {
    let ok = true
    for (const stream of [false, true]) {
      const l = await latency(up.port, px.port, stream, 2000)
      const real = await throughput(up.port, px.port, stream, seconds, 64, 200, true)
      const fast = await throughput(up.port, px.port, stream, seconds, 16, 20, true)
      const stress = await throughput(up.port, px.port, stream, seconds, 16, 20)
      const stressBare = await throughput(up.port, bare.port, stream, seconds, 16, 20)
      const instant = await throughput(up.port, px.port, stream, seconds, 32)
      const cpu = await cpuPerRequest(up.child, px.child, px.port, stream)
      const floor = await cpuPerRequest(up.child, bare.child, bare.port, stream)
      const label = stream ? 'stream    ' : 'non-stream'
      const pc = (x: number): string => `${(x * 100).toFixed(1)}%`
      const line = (what: string, t: { direct: number; proxied: number; share: number }): string =>
        `proxy ${label}: throughput, ${what}: direct ${t.direct.toFixed(0)} req/s, proxied ${t.proxied.toFixed(0)} req/s = ${pc(t.share)}`
      console.log(
        `proxy ${label}: direct p50 ${f(l.directP50)} ms, proxied p50 ${f(l.proxiedP50)} ms; added p50 ${f(l.addedP50)} ms, p99 ${f(l.addedP99)} ms, first byte p50 ${f(l.addedFirstByteP50)} ms`,
      )
      console.log(line('100-300 ms upstream (64 clients)', real))
      console.log(line('10-30 ms upstream (16 clients)', fast))
      console.log(
        `${line('20 ms upstream in lockstep (16 clients), stress', stress)} (a bare forwarder without telemetry: ${pc(stressBare.share)})`,
      )
      console.log(`${line('instant upstream (32 clients), CPU-bound', instant)}`)
      console.log(
        `proxy ${label}: CPU per request: proxy ${cpu.proxyUs.toFixed(0)} µs, upstream ${cpu.upstreamUs.toFixed(0)} µs (one core sustains ≈ ${(1e6 / cpu.proxyUs).toFixed(0)} proxied req/s); a bare forwarder without telemetry: ${floor.proxyUs.toFixed(0)} µs`,
      )
      ok &&= l.addedP50 <= 1 && real.share >= 0.9 && fast.share >= 0.9
    }
    const lc = await litellmCapture()
    console.log(`litellm capture: ${lc.rows} rows in ${(lc.ms / 1000).toFixed(2)} s (target ≤ 5 s)`)
    ok &&= lc.rows === 10_000 && lc.ms <= 5000
    console.log(`machine: load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} CPU(s)`)
    console.log(ok ? 'telemetry targets: met' : 'telemetry targets: NOT met')
    process.exitCode = ok ? 0 : 1
  } finally {
    up.child.kill()
    px.child.kill()
    bare.child.kill()
    agent.destroy()
    rmSync(dir, { recursive: true, force: true })
  }
}

// Children report their CPU time when asked, so per-request CPU is measured apart from machine noise.
if (role !== 'main') process.on('message', () => process.send?.(process.cpuUsage()))
if (role === 'upstream') await serveUpstream()
else if (role === 'bare') await serveBare(process.argv[process.argv.indexOf('--upstream') + 1] as string)
else if (role === 'proxy')
  await serveProxy(
    process.argv[process.argv.indexOf('--upstream') + 1] as string,
    process.argv[process.argv.indexOf('--ledger') + 1] as string,
  )
else await main()
