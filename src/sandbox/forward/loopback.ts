/** The line the loopback forwarder prints on stdout once every port listens. */
export const FORWARDER_READY = 'hw-forward-ready'

/**
 * The loopback forwarder, as a self-contained Node program (no imports beyond `net`), run inside the
 * sandbox with the host's Node (`node -e <this> <dir> <port>...`): for each port it listens on
 * 127.0.0.1:<port> and pipes every connection to `<dir>/<port>.sock`, the host listener of
 * host.ts. It prints FORWARDER_READY once all ports listen, then stays up until killed; with no ports it
 * only stays up (the sandbox's keep-alive process). A port it cannot listen on ends it with exit 3.
 */
export const LOOPBACK_FORWARDER_JS = `
const net = require('net');
const [dir, ...ports] = process.argv.slice(1);
let pending = ports.length;
const ready = () => { if (pending === 0) process.stdout.write(${JSON.stringify(`${FORWARDER_READY}\n`)}); };
for (const p of ports) {
  const server = net.createServer((a) => {
    const b = net.connect(dir + '/' + p + '.sock');
    a.pipe(b); b.pipe(a);
    const end = () => { a.destroy(); b.destroy(); };
    a.on('error', end); b.on('error', end); a.on('close', end); b.on('close', end);
  });
  server.on('error', (e) => { process.stderr.write('forward ' + p + ': ' + e.message + '\\n'); process.exit(3); });
  server.listen(Number(p), '127.0.0.1', () => { pending--; ready(); });
}
ready();
setInterval(() => {}, 1 << 30);
process.on('SIGTERM', () => process.exit(0));
`.trim()

/**
 * Arguments for the host's `node` that start the loopback forwarder inside the sandbox, where `dir`
 * is the host-forward folder as the sandbox sees it. The socket names follow host.ts (socketName: `<port>.sock`).
 */
export function loopbackForwarderArgs(dir: string, ports: readonly number[]): string[] {
  return ['-e', LOOPBACK_FORWARDER_JS, dir, ...ports.map(String)]
}
