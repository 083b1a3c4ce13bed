import dgram from 'node:dgram'

/** The question name of a DNS query packet, or null when it cannot be read. */
export function queryName(msg: Buffer): string | null {
  if (msg.length < 13) return null
  const labels: string[] = []
  let i = 12
  while (i < msg.length) {
    const len = msg[i] ?? 0
    if (len === 0) return labels.join('.')
    if (len > 63 || i + 1 + len > msg.length) return null
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'))
    i += 1 + len
  }
  return null
}

/** An NXDOMAIN answer to a query: same id and question, response flag, rcode 3. */
export function nxdomain(msg: Buffer): Buffer {
  const out = Buffer.from(msg)
  out[2] = 0x81 | ((msg[2] ?? 0) & 0x01) // QR=1, opcode 0, RD copied
  out[3] = 0x83 // RA=1, RCODE=3 (NXDOMAIN)
  out.writeUInt16BE(0, 6) // ANCOUNT
  out.writeUInt16BE(0, 8) // NSCOUNT
  out.writeUInt16BE(0, 10) // ARCOUNT
  return out
}

/**
 * A DNS sink on 127.0.0.1:53 (UDP): logs every name asked for and answers NXDOMAIN, so a harness in a
 * loopback-only namespace fails fast and its outside lookups become a logged fact.
 */
export async function startDnsSink(): Promise<{ names: string[]; close(): Promise<void> }> {
  const names: string[] = []
  const sock = dgram.createSocket('udp4')
  sock.on('message', (msg, rinfo) => {
    const name = queryName(msg)
    if (name !== null) names.push(name)
    sock.send(nxdomain(msg), rinfo.port, rinfo.address)
  })
  await new Promise<void>((resolve, reject) => {
    sock.once('error', reject)
    sock.bind(53, '127.0.0.1', () => resolve())
  })
  return { names, close: () => new Promise((r) => sock.close(() => r())) }
}
