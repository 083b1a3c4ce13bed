import { randomBytes } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installNpm, MARKER } from '../../src/harnesses/install.js'
import type { Isolation } from '../../src/records/isolation.js'
import { BACKENDS } from '../../src/sandbox/select.js'
import { pidsWithCmdline } from '../run/fixture.js'
import { sentinelHuntScript } from '../support/sentinel-hunt.js'
import { type LocalRegistry, startRegistry } from './npm-registry.js'

// Issue 11 point 1 for installs, version probes, reference solutions and verifiers: a probe npm
// package (a `preinstall` script in the harness package, a `postinstall` script in its dependency, and
// a `--version` that hunts too), served by a local registry on 127.0.0.1, and a probe Python
// interpreter (its `-m venv` and the pip it makes hunt) are installed by the real install code, and a
// task whose solution/solve.sh and tests/test.sh hunt is verified, in a child process whose
// environment holds sentinel secrets. Each hunt reads every /proc/<pid>/environ and cmdline it can, its parent chain, a
// planted checkout `.git/config` token and a file in the action user's home. Under namespace+uid no
// hunt finds a sentinel and no file of the cache holds one; under env-only the same hunts find them
// (the probe can fail).

const root = path.resolve(import.meta.dirname, '../..')
const tsx = path.join(root, 'node_modules', '.bin', 'tsx')
const child = path.join(import.meta.dirname, 'install-child.ts')

const sentinel = (name: string): string => `hwsentinel-${name}-${randomBytes(8).toString('hex')}`
const secrets = {
  PROVIDER_API_KEY: sentinel('provider'),
  LITELLM_MASTER_KEY: sentinel('litellm'),
  ACTIONS_RUNTIME_TOKEN: sentinel('runtime'),
  GITHUB_TOKEN: sentinel('github'),
}
const gitToken = sentinel('checkout')
const homeSecret = sentinel('home')
const homeFile = path.join(os.homedir(), `.hw-install-probe-${randomBytes(6).toString('hex')}`)
const all = [...Object.values(secrets), gitToken, homeSecret]
/** A `sleep` argument no other process has: the process the dependency's postinstall leaves behind. */
const linger = `${300 + Math.floor(Math.random() * 600)}.${randomBytes(4).readUInt32BE(0)}`

let base = ''
let checkout = ''
let registry: LocalRegistry | null = null
let python = ''
let task = ''

/** The hunt, as a shell script: everything it reads goes to stdout. */
function huntScript(): string {
  return `${sentinelHuntScript('HUNT', { checkout, homeFile })}\n`
}

/** `--version` of the probe harness: 1.0.0 when its hunt saw no sentinel, 0.0.<distinct seen> otherwise. */
const BIN_JS = `#!/usr/bin/env node
const { execFileSync } = require('node:child_process')
const path = require('node:path')
let text = ''
try {
  text = execFileSync('sh', [path.join(__dirname, 'hunt.sh')], { encoding: 'utf8' })
} catch (e) {
  text = String(e.stdout || '')
}
const seen = new Set(text.match(new RegExp('hwsent' + 'inel-[a-z]+-[0-9a-f]{16}', 'g')) || [])
console.log(!text.includes('HUNT-END') ? '0.0.0-nohunt' : seen.size === 0 ? '1.0.0' : '0.0.' + seen.size)
`

/** A probe "python3": `-m venv <dir>` hunts, then makes a `pip` that hunts and writes the console script. */
function pythonScript(hunt: string): string {
  return [
    '#!/bin/sh',
    '[ "$1" = "-m" ] && [ "$2" = "venv" ] || exit 2',
    'v="$3"',
    `sh ${JSON.stringify(hunt)} > "$v.hunt-venv.txt" 2>&1`,
    'mkdir -p "$v/bin"',
    'cat > "$v/bin/pip" <<\'PIP\'',
    '#!/bin/sh',
    'd=$(dirname "$0")',
    `sh ${JSON.stringify(hunt)} > "$d/../../hunt-pip.txt" 2>&1`,
    'printf "#!/bin/sh\\necho 1.0.0\\n" > "$d/hw-probe"',
    'chmod +x "$d/hw-probe"',
    'PIP',
    'chmod +x "$v/bin/pip"',
    '',
  ].join('\n')
}

interface InstallProbe {
  exitCode: number | undefined
  result: {
    npm?: { root: string; bin: string }
    again?: { root: string; bin: string }
    version?: string | null
    npmError?: string
    pip?: { root: string; bin: string }
    pipError?: string
    verify?: { id: string; start: string; solution: string; note?: string }
    verifyError?: string
  }
  stderr: string
  cacheDir: string
  /** Hunt outputs by name (preinstall, postinstall, venv, pip); '' when the file is missing. */
  hunts: Record<string, string>
  /** `<file>: <sentinel kind>` for every cache file holding a sentinel. */
  cacheHits: string[]
  /** Pids of the process the postinstall script left behind, still running after the install. */
  lingering: number[]
}

async function runInstallProbe(backend: Isolation): Promise<InstallProbe> {
  const cacheDir = path.join(base, `cache-${backend.replace('+', '-')}`)
  const logs = path.join(base, `logs-${backend.replace('+', '-')}`)
  const r = await execa(
    tsx,
    [child, JSON.stringify({ backend, cacheDir, registry: registry?.url, python, task, logs })],
    {
      cwd: checkout,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), ...secrets },
      extendEnv: false,
      reject: false,
      timeout: 120_000,
    },
  )
  const result = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as InstallProbe['result']
  const npmRoot = path.join(cacheDir, 'hw-probe-harness@1.0.0')
  const pipRoot = path.join(cacheDir, 'pypi__hw-probe@1.0.0')
  const read = (f: string): string => (existsSync(f) ? readFileSync(f, 'utf8') : '')
  const hunts = {
    preinstall: read(path.join(npmRoot, 'node_modules', 'hw-probe-harness', 'hunt-preinstall.txt')),
    postinstall: read(path.join(npmRoot, 'node_modules', 'hw-probe-dep', 'hunt-postinstall.txt')),
    venv: read(path.join(pipRoot, 'venv.hunt-venv.txt')),
    pip: read(path.join(pipRoot, 'hunt-pip.txt')),
    'verifier (untouched)': read(path.join(logs, 'probe-task', 'start.log')),
    'solve.sh': read(path.join(logs, 'probe-task', 'solve.log')),
    'verifier (solved)': read(path.join(logs, 'probe-task', 'solution.log')),
  }
  const cacheHits: string[] = []
  const files = [
    ...readdirSync(cacheDir, { recursive: true }).map((rel) => path.join(cacheDir, String(rel))),
    ...(existsSync(logs) ? readdirSync(logs, { recursive: true }) : []).map((rel) =>
      path.join(logs, String(rel)),
    ),
  ]
  for (const file of files) {
    const rel = path.relative(base, file)
    if (!statSync(file).isFile()) continue
    const text = readFileSync(file).toString('latin1')
    for (const s of all) if (text.includes(s)) cacheHits.push(`${rel}: ${s.split('-')[1]}`)
  }
  return {
    exitCode: r.exitCode,
    result,
    stderr: r.stderr,
    cacheDir,
    hunts,
    cacheHits,
    lingering: pidsWithCmdline(`sleep ${linger}`),
  }
}

let nsProbe: { ok: boolean; reason: string | null } = { ok: false, reason: 'not probed' }
beforeAll(async () => {
  base = mkdtempSync(path.join(os.tmpdir(), 'hw-install-probe-'))
  checkout = path.join(base, 'checkout')
  mkdirSync(path.join(checkout, '.git'), { recursive: true })
  writeFileSync(
    path.join(checkout, '.git', 'config'),
    `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${gitToken}\n`,
  )
  writeFileSync(homeFile, `${homeSecret}\n`, { mode: 0o644 })
  const hunt = huntScript()
  registry = await startRegistry(
    [
      {
        manifest: {
          name: 'hw-probe-dep',
          version: '1.0.0',
          // It also leaves a process behind (its own session): nothing of an install may outlive it.
          scripts: {
            postinstall: `sh ./hunt.sh > hunt-postinstall.txt 2>&1; (setsid sleep ${linger} > /dev/null 2>&1 &)`,
          },
        },
        files: { 'hunt.sh': hunt },
      },
      {
        manifest: {
          name: 'hw-probe-harness',
          version: '1.0.0',
          bin: { 'hw-probe-harness': 'bin.js' },
          dependencies: { 'hw-probe-dep': '1.0.0' },
          scripts: { preinstall: 'sh ./hunt.sh > hunt-preinstall.txt 2>&1' },
        },
        files: { 'hunt.sh': hunt, 'bin.js': BIN_JS },
      },
      {
        manifest: {
          name: 'hw-probe-broken',
          version: '1.0.0',
          scripts: { preinstall: 'echo "broken install script ran as $(id -u)" >&2; exit 3' },
        },
        files: { 'index.js': '' },
      },
    ],
    path.join(base, 'registry'),
  )
  const py = path.join(base, 'py')
  mkdirSync(path.join(py, 'bin'), { recursive: true })
  writeFileSync(path.join(py, 'hunt.sh'), hunt)
  python = path.join(py, 'bin', 'python3')
  writeFileSync(python, pythonScript(path.join(py, 'hunt.sh')), { mode: 0o755 })
  // A task whose reference solution and verifier hunt (their output goes to the verify logs).
  task = path.join(base, 'probe-task')
  const taskFiles: Record<string, string> = {
    'task.toml':
      'version = "1.0"\n\n[metadata]\ndifficulty = "easy"\nlanguage = "none"\ncategory = "bugfix"\n\n[verifier]\ntimeout_sec = 60\n\n[agent]\ntimeout_sec = 60\n',
    'instruction.md': 'Create the file solved.\n',
    'environment/README.md': 'probe\n',
    'tests/hunt.sh': hunt,
    'tests/test.sh': 'sh "$HW_TESTS_DIR/hunt.sh"\ntest -f solved\n',
    'solution/hunt.sh': hunt,
    'solution/solve.sh': 'sh "$(dirname "$0")/hunt.sh"\ntouch solved\n',
  }
  for (const [rel, text] of Object.entries(taskFiles)) {
    mkdirSync(path.dirname(path.join(task, rel)), { recursive: true })
    writeFileSync(path.join(task, rel), text, { mode: 0o755 })
  }
  nsProbe = await BACKENDS['namespace+uid'].probe()
})
afterAll(async () => {
  rmSync(homeFile, { force: true })
  await registry?.close()
  if (base) rmSync(base, { recursive: true, force: true })
})

describe('install scripts and version probes: no secret reaches third-party code', () => {
  it('namespace+uid: npm lifecycle scripts, the --version probe, venv, pip, solve.sh and the verifier find no sentinel; no cache or log file holds one', async (ctx) => {
    if (!nsProbe.ok) {
      ctx.skip(`namespace+uid is not available here: ${nsProbe.reason}`)
      return
    }
    const fetched = (): number =>
      registry?.requests.filter((u) => u.endsWith('/hw-probe-harness-1.0.0.tgz')).length ?? 0
    const before = fetched()
    const r = await runInstallProbe('namespace+uid')
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.result.npmError).toBeUndefined()
    expect(r.result.pipError).toBeUndefined()
    expect(r.result.verifyError).toBeUndefined()
    expect(r.result.verify).toEqual({ id: 'probe-task', start: 'fail', solution: 'pass' })
    const me = process.getuid?.()
    for (const [name, text] of Object.entries(r.hunts)) {
      // Each hunt ran to its end, as another (unprivileged) user, and read its own processes' /proc files.
      expect(text, name).toContain('HUNT-END')
      const uid = Number(/HUNT-START uid=(\d+)/.exec(text)?.[1])
      expect(uid, name).not.toBe(0)
      expect(uid, name).not.toBe(me)
      expect(Number(/HUNT-READ (\d+)/.exec(text)?.[1]), name).toBeGreaterThanOrEqual(2)
      // Only its own namespace: the parent chain stays among small pids.
      expect(text, name).not.toMatch(/PARENT (?!1\b)\d{4,}/)
      for (const s of all) expect(text, name).not.toContain(s)
      expect(text, name).not.toMatch(/^OWN (GITHUB_|ACTIONS_|PROVIDER_|LITELLM_)/m)
    }
    // The --version probe ran in the sandbox too: its hunt saw nothing.
    expect(r.result.version).toBe('1.0.0')
    expect(r.cacheHits).toEqual([])
    expect(r.lingering).toEqual([])
    // The install folders and the npm download cache are the action user's again.
    for (const dir of [r.result.npm?.root ?? '', path.join(r.cacheDir, '.npm'), r.result.pip?.root ?? '']) {
      expect(statSync(dir).uid, dir).toBe(me)
    }
    // The second install was a cache hit: npm ran once, the package was fetched once.
    expect(r.result.again).toEqual(r.result.npm)
    expect(r.stderr.match(/^installing hw-probe-harness@1\.0\.0/gm)).toHaveLength(1)
    expect(fetched() - before).toBe(1)
  }, 120_000)

  it('env-only: the same hunts find every sentinel (the probe works; this backend is not isolation)', async () => {
    const r = await runInstallProbe('env-only')
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.result.npmError).toBeUndefined()
    expect(r.result.pipError).toBeUndefined()
    expect(r.result.verifyError).toBeUndefined()
    expect(r.result.verify).toEqual({ id: 'probe-task', start: 'fail', solution: 'pass' })
    for (const [name, text] of Object.entries(r.hunts)) {
      expect(text, name).toContain('HUNT-END')
      expect(text, name).toContain(`uid=${process.getuid?.()}`)
      for (const s of Object.values(secrets)) expect(text, name).toContain(s)
      expect(text, name).toContain(gitToken)
      expect(text, name).toContain(homeSecret)
      // Its own environment is still the allowlist: no secret is handed to it by name.
      expect(text, name).not.toMatch(/^OWN (PROVIDER_API_KEY|GITHUB_TOKEN|ACTIONS_RUNTIME_TOKEN)=/m)
    }
    expect(r.result.version).toMatch(/^0\.0\.[1-9]$/)
    expect(r.cacheHits.length).toBeGreaterThan(0)
    // Even as the action's user, the process left behind is found (by the install's HOME) and killed.
    expect(r.lingering).toEqual([])
  }, 120_000)

  it('namespace+uid: a failing install script is install_failed with its output; nothing is marked installed', async (ctx) => {
    if (!nsProbe.ok) {
      ctx.skip(`namespace+uid is not available here: ${nsProbe.reason}`)
      return
    }
    const cacheDir = path.join(base, 'cache-broken')
    const spec = {
      harness: 'command' as const,
      package: 'hw-probe-broken',
      resolveBin: (r: string) => path.join(r, 'node_modules', 'hw-probe-broken', 'index.js'),
    }
    const err = await installNpm(
      spec,
      '1.0.0',
      { cacheDir, log: () => {}, sandbox: BACKENDS['namespace+uid'] },
      { npmArgs: ['--registry', registry?.url ?? ''] },
    ).catch((e) => e)
    expect(err).toMatchObject({
      code: 'install_failed',
      message: expect.stringMatching(/^npm install hw-probe-broken@1\.0\.0 failed \(exit [1-9]\d*\)$/),
    })
    const said = /broken install script ran as (\d+)/.exec(err.details.join('\n'))
    expect(Number(said?.[1])).toBeGreaterThan(0)
    expect(Number(said?.[1])).not.toBe(process.getuid?.())
    const root = path.join(cacheDir, 'hw-probe-broken@1.0.0')
    expect(existsSync(path.join(root, MARKER))).toBe(false)
    expect(existsSync(path.join(root, '.install-home'))).toBe(false)
    expect(statSync(root).uid).toBe(process.getuid?.())
    expect(statSync(path.join(cacheDir, '.npm')).uid).toBe(process.getuid?.())
  }, 60_000)
})
