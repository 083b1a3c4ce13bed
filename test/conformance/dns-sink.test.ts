import dgram from 'node:dgram'
import { describe, expect, it } from 'vitest'
import { nxdomain, queryName } from './dns-sink.js'

/** A DNS query for `name` (type A), as a resolver sends it. */
function query(name: string, id = 0x1234): Buffer {
  const labels = name.split('.').flatMap((l) => [Buffer.from([l.length]), Buffer.from(l, 'latin1')])
  return Buffer.concat([
    Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]),
    ...labels,
    Buffer.from([0, 0, 1, 0, 1]),
  ])
}

describe('DNS sink', () => {
  it('reads the question name and answers NXDOMAIN with the same id', () => {
    const q = query('registry.npmjs.org', 0xbeef)
    expect(queryName(q)).toBe('registry.npmjs.org')
    const a = nxdomain(q)
    expect(a.readUInt16BE(0)).toBe(0xbeef)
    expect(a[2]! & 0x80).toBe(0x80)
    expect(a[3]! & 0x0f).toBe(3)
    expect(queryName(Buffer.from([1, 2, 3]))).toBeNull()
  })

  it('a real resolver query over UDP gets the NXDOMAIN answer', async () => {
    // Same logic as startDnsSink, on a free port (port 53 needs a namespace of our own).
    const names: string[] = []
    const sink = dgram.createSocket('udp4')
    sink.on('message', (msg, r) => {
      names.push(queryName(msg) ?? '?')
      sink.send(nxdomain(msg), r.port, r.address)
    })
    await new Promise<void>((r) => sink.bind(0, '127.0.0.1', () => r()))
    const port = sink.address().port
    const client = dgram.createSocket('udp4')
    const answer = await new Promise<Buffer>((resolve) => {
      client.on('message', (m) => resolve(m))
      client.send(query('api.anthropic.com'), port, '127.0.0.1')
    })
    client.close()
    sink.close()
    expect(names).toEqual(['api.anthropic.com'])
    expect(answer[3]! & 0x0f).toBe(3)
  })
})
