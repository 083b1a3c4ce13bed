// The "action" side of test/sandbox/install-probe.test.ts, run in a child process whose environment
// holds the sentinel secrets: installs the probe npm package (and its dependency) from the local
// registry and asks its `--version`, installs a Python "harness" with the probe interpreter, and
// verifies a task whose solve.sh and verifier hunt, all through the backend named on the command line. Prints one JSON line with what it got.
import path from 'node:path'
import { installNpm, installPip, type NpmHarnessSpec } from '../../src/harnesses/install.js'
import { npmLifecycle } from '../../src/harnesses/npm-harness.js'
import { loadTask } from '../../src/panel/task.js'
import { verifyTask } from '../../src/panel/verify.js'
import type { HostIsolation as Isolation } from '../../src/sandbox/select.js'
import { BACKENDS } from '../../src/sandbox/select.js'

const args = JSON.parse(process.argv[2] ?? '{}') as {
  backend: Isolation
  cacheDir: string
  registry: string
  python: string
  task: string
  logs: string
}
const sandbox = BACKENDS[args.backend]
const log = (line: string): void => {
  process.stderr.write(`${line}\n`)
}
const spec: NpmHarnessSpec = {
  harness: 'command',
  package: 'hw-probe-harness',
  resolveBin: (root) => path.join(root, 'node_modules', 'hw-probe-harness', 'bin.js'),
}
const out: Record<string, unknown> = {}
try {
  const installed = await installNpm(
    spec,
    '1.0.0',
    { cacheDir: args.cacheDir, log, sandbox },
    {
      npmArgs: ['--registry', args.registry],
    },
  )
  out.npm = installed
  out.version = await npmLifecycle(spec).probeVersion(installed, sandbox)
  // Installed again: a cache hit runs nothing (the probe's hunt files are not rewritten).
  out.again = await installNpm(
    spec,
    '1.0.0',
    { cacheDir: args.cacheDir, log, sandbox },
    {
      npmArgs: ['--registry', args.registry],
    },
  )
} catch (e) {
  out.npmError = `${(e as Error).message}\n${((e as { details?: string[] }).details ?? []).join('\n')}`
}
try {
  out.pip = await installPip(
    { harness: 'mini-swe-agent', package: 'hw-probe', script: 'hw-probe' },
    '1.0.0',
    { cacheDir: args.cacheDir, log, sandbox },
    { python: args.python },
  )
} catch (e) {
  out.pipError = `${(e as Error).message}\n${((e as { details?: string[] }).details ?? []).join('\n')}`
}
try {
  // A task whose solve.sh and tests/test.sh hunt: the reference solution and the verifier, twice.
  out.verify = await verifyTask(await loadTask(args.task), { sandbox, logsDir: args.logs })
} catch (e) {
  out.verifyError = (e as Error).message
}
process.stdout.write(`${JSON.stringify(out)}\n`)
