import net from 'node:net'

/**
 * Send `head` (raw HTTP/1.1 bytes) to the server at `origin` over a fresh socket and resolve with the
 * status line of its answer, e.g. `HTTP/1.1 400 Bad Request`: for requests no HTTP client will send.
 */
export function rawRequest(origin: string, head: string): Promise<string> {
  const { port } = new URL(origin)
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), '127.0.0.1', () => s.write(head))
    let got = ''
    s.on('data', (c: Buffer) => {
      got += c.toString('latin1')
      if (got.includes('\r\n')) {
        resolve(got.slice(0, got.indexOf('\r\n')))
        s.destroy()
      }
    })
    s.on('error', reject)
  })
}
