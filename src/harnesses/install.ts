import { existsSync } from 'node:fs'
import { chmod, copyFile, lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import type { HarnessName } from '../manifest/harness-names.js'
import { EXACT_VERSION } from '../manifest/schema.js'
import { toolEnv } from '../process/exec.js'
import type { SandboxBackend } from '../sandbox/contract.js'
import { isolates, type JobRun, runSandboxJob } from '../sandbox/job.js'
import { HwError } from '../util/errors.js'
import { quotePath } from '../util/paths.js'
import type { InstallContext, InstalledHarness } from './contract.js'
import { npmCli, pythonRoots, resolveOnPath } from './install-tools.js'

/** Name of the file written last into an install folder; without it the install is redone. */
export const MARKER = '.hw-installed.json'

/** The shared cache root: `$HW_CACHE_DIR`, else `~/.cache/harness-watch/harnesses`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.HW_CACHE_DIR
  if (fromEnv && fromEnv.trim() !== '') return path.resolve(fromEnv)
  return path.join(os.homedir(), '.cache', 'harness-watch', 'harnesses')
}

/** `@scope/name` → `@scope__name`: one folder segment per package (the version follows after `@`). */
export function sanitizePackage(pkg: string): string {
  return pkg.replace(/\//g, '__').replace(/[^A-Za-z0-9@._-]/g, '_')
}

/** `<cacheDir>/<sanitized-package>@<version>`. */
export function installDir(cacheDir: string, pkg: string, version: string): string {
  return path.join(cacheDir, `${sanitizePackage(pkg)}@${version}`)
}

/**
 * Harness versions must be pinned: a range or a dist-tag (`latest`) would make the cache folder and
 * the identity check (probed version = declared version) meaningless. Throws HwError `bad_version`.
 */
export function assertExactVersion(harness: string, version: string): void {
  if (!EXACT_VERSION.test(version)) {
    throw new HwError('bad_version', `harness ${harness}: version "${version}" is not an exact version`, {
      where: 'cells[].version',
      help: 'pin the harness to one released version, e.g. 1.18.33 (see `npm view <package> versions`)',
    })
  }
}

/** What the marker file records about one finished install. */
export interface InstallMarker {
  package: string
  version: string
  installed_at: string
  seconds: number
  bytes: number
  bin: string
}

/** How an adapter installs and finds its npm package. */
export interface NpmHarnessSpec {
  harness: HarnessName
  package: string
  /** Absolute path of the executable inside the install folder (JS entry or native binary). */
  resolveBin(root: string): string | Promise<string>
  /**
   * Fix-ups after npm (e.g. a vendored binary shipped without its execute bit). `sandbox`: the run's
   * backend, for a fix-up that runs the package's own code (it must run in a sandbox of it).
   */
  afterInstall?(root: string, sandbox?: SandboxBackend): Promise<void>
}

/** Options of the npm/pip runs, for tests (a local registry) and unusual machines. */
export interface InstallOptions {
  /** Extra arguments for `npm install` (e.g. `--registry`). */
  npmArgs?: string[]
  /** How long to wait for another process installing the same package, ms (default 30 min). */
  lockWaitMs?: number
}

/**
 * Install `<package>@<version>` into `<cacheDir>/<sanitized-package>@<version>/` once per machine and
 * reuse it afterwards. Concurrent legs installing the same package wait on a lock file
 * (`<dir>.lock`, refreshed while held, stale after 60 s so a killed install is taken over); the marker
 * file `.hw-installed.json` is written last, so a half-finished install is wiped and redone.
 * npm runs as a job of the run's sandbox (`ctx.sandbox`; under `namespace+uid` as the slot's user, so
 * no install script of the dependency tree can read the action's `/proc/<pid>/environ` or files) with
 * an allowlisted environment (toolEnv: never the runner's secrets), HOME set to a scratch folder
 * (OpenCode's postinstall writes into HOME) holding a copy of the user's `~/.npmrc`, and a download
 * cache shared in `<cacheDir>/.npm` (see runNpmInstall). A cached install runs nothing.
 * Throws HwError `install_failed` (npm failed, or the expected executable is missing afterwards).
 */
export async function installNpm(
  spec: NpmHarnessSpec,
  version: string,
  ctx: InstallContext,
  opts: InstallOptions = {},
): Promise<InstalledHarness> {
  assertExactVersion(spec.harness, version)
  const root = installDir(ctx.cacheDir, spec.package, version)
  const cached = await reuse(spec, root)
  if (cached) return { harness: spec.harness, version, bin: cached, root }

  await mkdir(ctx.cacheDir, { recursive: true })
  const release = await acquire(root, `${spec.package}@${version}`, ctx, opts.lockWaitMs)
  try {
    const again = await reuse(spec, root)
    if (again) return { harness: spec.harness, version, bin: again, root }
    const t0 = Date.now()
    ctx.log(`installing ${spec.package}@${version} into ${quotePath(root)}`)
    // npm writes node_modules/.package-lock.json at the end of a complete install; a folder without it
    // is wiped, one with it is reconciled in place by npm (cheap when nothing is missing).
    if (!existsSync(path.join(root, 'node_modules', '.package-lock.json'))) {
      await rm(root, { recursive: true, force: true })
    }
    await mkdir(root, { recursive: true })
    if (!existsSync(path.join(root, 'package.json'))) {
      await writeFile(path.join(root, 'package.json'), '{ "name": "hw-harness-install", "private": true }\n')
    }
    const scratchHome = path.join(root, '.install-home')
    const r = await runNpmInstall(spec.package, version, root, scratchHome, ctx, opts)
    if (r.spawnError || (r.exitCode === 127 && /No such file or directory/.test(r.output))) {
      throw new HwError('install_failed', `cannot run npm to install ${spec.package}@${version}`, {
        details: [r.spawnError ?? tail(r.output, 3).join(' ')],
        help: 'npm harnesses install with npm: put Node.js (with npm) on PATH',
      })
    }
    if (r.timedOut || r.aborted) {
      throw new HwError(
        'install_failed',
        `npm install ${spec.package}@${version} ${r.aborted ? 'was stopped' : `timed out after ${INSTALL_TIMEOUT_MS / 60_000} min`}`,
        { details: tail(r.output, 12) },
      )
    }
    if (r.exitCode !== 0) {
      throw new HwError(
        'install_failed',
        `npm install ${spec.package}@${version} failed (exit ${r.exitCode ?? r.signal})`,
        {
          details: tail(r.output, 12),
          help: `check that version ${version} exists (npm view ${spec.package} versions) and that the npm registry is reachable`,
        },
      )
    }
    if (spec.afterInstall) await spec.afterInstall(root, ctx.sandbox)
    const bin = await spec.resolveBin(root)
    if (!existsSync(bin)) {
      throw new HwError('install_failed', `${spec.package}@${version} installed, but ${bin} is missing`, {
        help: `this platform (${process.platform}-${process.arch}) may have no build of ${spec.package}`,
      })
    }
    const marker = await writeMarker(root, spec.package, version, t0, bin)
    ctx.log(
      `installed ${spec.package}@${version} in ${marker.seconds.toFixed(1)} s (${(marker.bytes / 1e6).toFixed(0)} MB)`,
    )
    return { harness: spec.harness, version, bin, root }
  } finally {
    await release()
  }
}

/** Limit of one npm or pip run (the whole dependency tree), milliseconds. */
export const INSTALL_TIMEOUT_MS = 30 * 60_000

/**
 * `npm install <package>@<version> --prefix <root>` as a sandbox job of the run's backend: npm is
 * started with this process's Node (npmCli) and sees, writable, only the install folder and the shared
 * download cache `<cacheDir>/.npm`, with HOME a scratch folder inside the install folder holding a copy
 * of the user's `~/.npmrc` (registry settings; never the runner's environment). Under an isolating
 * backend the download cache is locked for the run (`<cacheDir>/.npm.lock`, outside what the sandbox may
 * write) because it is handed to one sandbox user at a time. The scratch home is removed afterwards.
 */
async function runNpmInstall(
  pkg: string,
  version: string,
  root: string,
  scratchHome: string,
  ctx: InstallContext,
  opts: InstallOptions,
): Promise<JobRun> {
  const npmCache = path.join(ctx.cacheDir, '.npm')
  await mkdir(scratchHome, { recursive: true })
  await mkdir(npmCache, { recursive: true })
  const userNpmrc = path.join(os.homedir(), '.npmrc')
  const npmrc = path.join(scratchHome, '.npmrc')
  if (existsSync(userNpmrc)) await copyFile(userNpmrc, npmrc)
  else await writeFile(npmrc, '')
  const npm = npmCli(process.env.PATH)
  const nodeDir = path.dirname(process.execPath)
  const env = toolEnv(process.env, {
    HOME: scratchHome,
    // Install scripts run `node`: the same Node as this process comes first.
    PATH: [nodeDir, process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(path.delimiter),
    npm_config_cache: npmCache,
    npm_config_userconfig: npmrc,
    npm_config_update_notifier: 'false',
    ...(process.env.npm_config_registry ? { npm_config_registry: process.env.npm_config_registry } : {}),
    ...(isolates(ctx.sandbox) ? { TMPDIR: '/tmp' } : {}),
  })
  const args = [
    ...npm.args,
    'install',
    '--prefix',
    root,
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--no-update-notifier',
    '--loglevel=error',
    ...(opts.npmArgs ?? []),
    `${pkg}@${version}`,
  ]
  const release = isolates(ctx.sandbox) ? await acquire(npmCache, 'the npm download cache', ctx) : null
  try {
    const [r] = await runSandboxJob(
      ctx.sandbox,
      {
        writable: [root, npmCache],
        readOnly: [nodeDir, ...(npm.root ? [npm.root] : [])],
        // The system's npm settings (registry, proxy, certificate authority), as npm outside reads them.
        hostConfig: ['npmrc'],
      },
      [{ command: npm.command, args, cwd: root, env }],
      { timeoutMs: INSTALL_TIMEOUT_MS, signal: ctx.signal, sweepHome: scratchHome },
    )
    if (!r) throw new Error('npm did not run')
    return r
  } finally {
    await release?.()
    await rm(scratchHome, { recursive: true, force: true })
  }
}

/** How an adapter installs a Python harness into a virtualenv in the cache. */
export interface PipHarnessSpec {
  harness: HarnessName
  /** PyPI distribution name. */
  package: string
  /** Console script inside the venv's bin folder (e.g. `openhands`, `mini`). */
  script: string
}

/**
 * Install a Python harness with `python3 -m venv <dir>/venv && <dir>/venv/bin/pip install <pkg>==<version>`,
 * with the same cache folder, lock, marker and sandbox rules as {@link installNpm} (venv and pip run in
 * one sandbox job; the install folder is its only writable folder). Throws HwError
 * `install_failed` when python3 is missing or pip cannot reach PyPI (the message says which).
 */
export async function installPip(
  spec: PipHarnessSpec,
  version: string,
  ctx: InstallContext,
  opts: InstallOptions & { python?: string; pipArgs?: string[] } = {},
): Promise<InstalledHarness> {
  assertExactVersion(spec.harness, version)
  const root = installDir(ctx.cacheDir, `pypi__${spec.package}`, version)
  const bin = path.join(root, 'venv', 'bin', spec.script)
  const ready = await readMarker(root)
  if (ready) return { harness: spec.harness, version, bin: ready.bin, root }
  await mkdir(ctx.cacheDir, { recursive: true })
  const release = await acquire(root, `${spec.package}==${version}`, ctx, opts.lockWaitMs)
  try {
    const again = await readMarker(root)
    if (again) return { harness: spec.harness, version, bin: again.bin, root }
    const t0 = Date.now()
    ctx.log(`installing ${spec.package}==${version} (PyPI) into ${quotePath(root)}`)
    await rm(root, { recursive: true, force: true })
    await mkdir(root, { recursive: true })
    const python = opts.python ?? 'python3'
    const scratchHome = path.join(root, '.install-home')
    await mkdir(scratchHome, { recursive: true })
    const pipArgs = [
      'install',
      '--disable-pip-version-check',
      '--retries',
      '1',
      '--timeout',
      '15',
      ...(opts.pipArgs ?? []),
      `${spec.package}==${version}`,
    ]
    const pyEnv = toolEnv(process.env, {
      HOME: scratchHome,
      ...(isolates(ctx.sandbox) ? { TMPDIR: '/tmp' } : {}),
    })
    const interpreter = resolveOnPath(python)
    // venv and pip (setup.py and build backends of the whole dependency tree) run in the run's sandbox.
    const [venv, r] = await runSandboxJob(
      ctx.sandbox,
      { writable: [root], readOnly: pythonRoots(interpreter), hostConfig: ['pip.conf', 'xdg/pip'] },
      [
        { command: interpreter, args: ['-m', 'venv', path.join(root, 'venv')], cwd: root, env: pyEnv },
        { command: path.join(root, 'venv', 'bin', 'pip'), args: pipArgs, cwd: root, env: pyEnv },
      ],
      { timeoutMs: INSTALL_TIMEOUT_MS, signal: ctx.signal, sweepHome: scratchHome },
    ).finally(() => rm(scratchHome, { recursive: true, force: true }))
    if (venv?.exitCode !== 0) {
      throw new HwError(
        'install_failed',
        `cannot create a Python virtualenv for ${spec.harness} with ${python}`,
        {
          details: venv ? [...(venv.spawnError ? [venv.spawnError] : []), ...tail(venv.output, 6)] : [],
          help: `${spec.harness} is a Python program: install Python 3.12+ with the venv module`,
        },
      )
    }
    if (r?.exitCode !== 0) {
      const out = r?.output ?? ''
      const unreachable =
        /connection|resolve|network|timed out|Temporary failure|No matching distribution/i.test(out)
      throw new HwError(
        'install_failed',
        unreachable
          ? `PyPI not reachable (or ${spec.package}==${version} not found): pip install failed for ${spec.harness}`
          : `pip install ${spec.package}==${version} failed (${r?.timedOut ? 'timed out' : `exit ${r?.exitCode ?? r?.signal}`})`,
        {
          details: tail(out, 8),
          help: `${spec.harness} installs from PyPI: run where pypi.org is reachable, or pre-install it into ${root}/venv`,
        },
      )
    }
    if (!existsSync(bin)) {
      throw new HwError('install_failed', `${spec.package}==${version} installed, but ${bin} is missing`)
    }
    const marker = await writeMarker(root, spec.package, version, t0, bin)
    ctx.log(`installed ${spec.package}==${version} in ${marker.seconds.toFixed(1)} s`)
    return { harness: spec.harness, version, bin, root }
  } finally {
    await release()
  }
}

/**
 * Record a finished install: the marker (package, version, ISO time, seconds since `t0` (epoch ms),
 * folder size in bytes, executable) is written last, so its presence means the folder is complete.
 */
async function writeMarker(
  root: string,
  pkg: string,
  version: string,
  t0: number,
  bin: string,
): Promise<InstallMarker> {
  const marker: InstallMarker = {
    package: pkg,
    version,
    installed_at: new Date().toISOString(),
    seconds: (Date.now() - t0) / 1000,
    bytes: await folderBytes(root),
    bin,
  }
  await writeFile(path.join(root, MARKER), `${JSON.stringify(marker, null, 2)}\n`)
  return marker
}

/** The executable of a finished install (marker present, executable still there), else null. */
async function reuse(spec: NpmHarnessSpec, root: string): Promise<string | null> {
  if (!(await readMarker(root))) return null
  // Resolved again (not read from the marker) so a fixed adapter applies to old installs too.
  const bin = await spec.resolveBin(root)
  return existsSync(bin) ? bin : null
}

/** The marker of a finished install whose executable still exists, else null. */
export async function readMarker(root: string): Promise<InstallMarker | null> {
  try {
    const m = JSON.parse(await readFile(path.join(root, MARKER), 'utf8')) as InstallMarker
    return typeof m.bin === 'string' && existsSync(m.bin) ? m : null
  } catch {
    return null
  }
}

/** Take the per-package lock, waiting (with one progress line) while another process holds it. */
async function acquire(
  root: string,
  label: string,
  ctx: InstallContext,
  waitMs = 30 * 60_000,
): Promise<() => Promise<void>> {
  const lockPath = `${root}.lock`
  const deadline = Date.now() + waitMs
  let told = false
  for (;;) {
    try {
      return await lockfile.lock(root, {
        lockfilePath: lockPath,
        realpath: false,
        stale: 60_000,
        update: 10_000,
        // The lock is only a courtesy between legs; losing it must not crash the run.
        onCompromised: (e) => ctx.log(`install lock for ${label} was taken over: ${e.message}`),
      })
    } catch (e) {
      if ((e as { code?: string }).code !== 'ELOCKED') throw e
      if (Date.now() > deadline) {
        throw new HwError('install_failed', `timed out waiting for another install of ${label}`, {
          help: `if no other install is running, remove ${lockPath}`,
        })
      }
      if (!told) ctx.log(`waiting for another install of ${label} to finish`)
      told = true
      await new Promise((r) => setTimeout(r, 1000))
    }
  }
}

/** Bytes under a folder (hard-linked files counted once, symlinks not followed). */
export async function folderBytes(dir: string): Promise<number> {
  let total = 0
  const seen = new Set<string>()
  const stack = [dir]
  while (stack.length > 0) {
    const d = stack.pop()!
    let entries: import('node:fs').Dirent[]
    try {
      entries = await readdir(d, { withFileTypes: true })
    } catch {
      continue
    }
    for (const e of entries) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) stack.push(p)
      else if (e.isFile()) {
        const st = await lstat(p)
        const id = `${st.dev}:${st.ino}`
        if (st.nlink > 1 && seen.has(id)) continue
        seen.add(id)
        total += st.size
      }
    }
  }
  return total
}

/** Make a vendored executable runnable (some packages ship binaries without the execute bit). */
export async function ensureExecutable(file: string): Promise<void> {
  if (existsSync(file)) await chmod(file, 0o755)
}

function tail(text: string, n: number): string[] {
  return text.trim().split(/\r?\n/).slice(-n)
}
