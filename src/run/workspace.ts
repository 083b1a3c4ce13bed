import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { appendFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import type { SandboxBackend } from '../sandbox/contract.js'
import { runSandboxJob } from '../sandbox/job.js'
import { readBack, readBackBytes } from '../sandbox/read-back.js'
import { sha256 } from '../util/json.js'
import { decodeUtf8 } from '../util/utf8.js'
import { testOnlyDiff } from './diff-paths.js'
import type { IsolationDirs } from './env.js'

const execFileP = promisify(execFile)

/** The private folders of one attempt. */
export interface AttemptDirs extends IsolationDirs {
  /** 12 hex characters, unique per attempt. */
  id: string
  /** `<root>/w/<id>`: the git workspace, the harness's working directory. */
  workspace: string
  /** `<root>/s/<id>`: our scratch folder (setup output, predictions, grader reports); never the harness's. */
  scratch: string
}

/**
 * Make an attempt's folders under `root`: the workspace `<root>/w/<12-hex>` and the fresh home
 * `<root>/h/<12-hex>` holding the XDG folders and TMPDIR. Every attempt's workspace path has the same
 * length (the path is embedded in prompts: design/harnesses.md §5), so cells compared on one machine
 * see prompts of the same size.
 */
export async function makeAttemptDirs(root: string): Promise<AttemptDirs> {
  const id = randomBytes(6).toString('hex')
  const workspace = path.join(root, 'w', id)
  const home = path.join(root, 'h', id)
  const dirs: AttemptDirs = {
    id,
    workspace,
    scratch: path.join(root, 's', id),
    home,
    tmp: path.join(home, 'tmp'),
    xdgConfig: path.join(home, '.config'),
    xdgData: path.join(home, '.local', 'share'),
    xdgCache: path.join(home, '.cache'),
    xdgState: path.join(home, '.local', 'state'),
  }
  await mkdir(workspace, { recursive: true })
  await Promise.all(
    [dirs.scratch, dirs.tmp, dirs.xdgConfig, dirs.xdgData, dirs.xdgCache, dirs.xdgState].map((d) =>
      mkdir(d, { recursive: true }),
    ),
  )
  return dirs
}

/** Remove an attempt's workspace, home and scratch folder. */
export async function removeAttemptDirs(dirs: AttemptDirs): Promise<void> {
  await Promise.all([
    rm(dirs.scratch, { recursive: true, force: true, maxRetries: 2 }),
    rm(dirs.workspace, { recursive: true, force: true, maxRetries: 2 }),
    rm(dirs.home, { recursive: true, force: true, maxRetries: 2 }),
  ])
}

/** Fixed identity and date: the baseline commit of the same files has the same hash on every run. */
const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'harness-watch',
  GIT_AUTHOR_EMAIL: 'harness-watch@localhost',
  GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'harness-watch',
  GIT_COMMITTER_EMAIL: 'harness-watch@localhost',
  GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
}

/** 2000-01-01T00:00:00Z, the mtime of every file of a task's starting state. */
const FIXED_MTIME = '2000-01-01T00:00:00Z'

/** git without the runner's or the user's configuration (no hooks, signing or templates leak in). */
function gitEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: '/nonexistent',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    ...GIT_IDENTITY,
  }
}

const GIT_FLAGS = [
  '-c',
  'core.autocrlf=false',
  '-c',
  'commit.gpgsign=false',
  '-c',
  'core.hooksPath=/dev/null',
  // The workspace may be owned by a container's mapped id while the agent's container is kept for the
  // verifier; and nothing the agent wrote into .git/config may run a program of its choosing.
  '-c',
  'safe.directory=*',
  '-c',
  'core.fsmonitor=false',
]

/**
 * Turn the prepared workspace into a git repo with one commit holding every file (ignored ones too:
 * `add -A -f`) and return the commit hash. The repo's own config names a committer so a harness that
 * commits behaves the same in every cell. Throws when git fails (an infra failure of the attempt).
 */
export async function commitBaseline(workspace: string): Promise<string> {
  const script = [
    'git init -q -b main',
    `git ${GIT_FLAGS.join(' ')} add -A -f`,
    `git ${GIT_FLAGS.join(' ')} commit -q --no-verify --allow-empty -m task`,
    `git ${GIT_FLAGS.join(' ')} rev-parse HEAD`,
  ].join(' && ')
  const { stdout } = await execFileP('sh', ['-c', script], { cwd: workspace, env: gitEnv() })
  await appendFile(
    path.join(workspace, '.git', 'config'),
    `[user]\n\tname = ${GIT_IDENTITY.GIT_AUTHOR_NAME}\n\temail = ${GIT_IDENTITY.GIT_AUTHOR_EMAIL}\n`,
  )
  return stdout.trim()
}

/**
 * Prepare a reusable starting state: copy `source` into `dir`, commit it as the baseline
 * (commitBaseline) and pack the repo (few files to copy). Returns the baseline commit. Each attempt
 * then gets a copy of `dir` (copyTemplate): the same files and the same commit, for a fraction of the
 * cost of copying and committing again.
 */
export async function buildTemplate(source: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true })
  await execFileP('cp', ['-R', `${source}/.`, `${dir}/`])
  // One fixed mtime for every file: the same listing for every harness, and any later write shows.
  await execFileP('sh', ['-c', `find . -exec touch -h -d ${FIXED_MTIME} {} +`], { cwd: dir })
  const base = await commitBaseline(dir)
  await execFileP('sh', ['-c', 'git repack -a -d -q && git prune-packed'], { cwd: dir, env: gitEnv() })
  return base
}

/** Copy a template (files and .git) into an empty workspace, keeping modes and times. */
export async function copyTemplate(template: string, workspace: string): Promise<void> {
  await execFileP('cp', ['-pR', `${template}/.`, `${workspace}/`])
}

/** The attempt's deliverable: everything changed in the workspace since the baseline commit. */
export interface Deliverable {
  /** `git diff --binary` text (empty when nothing changed or git failed). */
  patch: string
  bytes: number
  /** sha256 hex of the patch, null when empty. */
  sha256: string | null
  files_changed: number
  /** Every changed file is a test file (see diff-paths.ts). */
  test_only?: boolean
  /** Malformed UTF-8 sequences in the diff (decoded with U+FFFD). */
  non_utf8?: number
  /** Why the diff could not be taken (e.g. the harness removed .git), or null. */
  error: string | null
  /** What the patch leaves out: binary files and files the repository ignores (at most 1,000 listed). */
  excluded?: { path: string; why: 'binary' | 'ignored' }[]
}

/**
 * The deliverable as `git diff` against the baseline: `git add -A` (never `-f`: files the repository
 * ignores, such as compiled `.pyc`, stay out), binary files unstaged again, then `diff --cached
 * --binary <base>` (commits the harness made are included, since the index is compared with the
 * baseline). What was left out — binary files changed or added, ignored files present (ignored folders
 * as one entry) — is listed in `excluded`, for a list beside the patch.
 * git runs as a job of `sandbox` (the run's backend): the harness could have set repository config
 * that makes git run commands (`core.fsmonitor`, filter drivers), so under an isolating backend they
 * run as the sandbox user, never as the action's. Without a backend, as the action's user.
 * Never throws: a failing git gives an empty deliverable with `error`.
 */
export async function collectDeliverable(
  workspace: string,
  base: string,
  sandbox?: SandboxBackend,
): Promise<Deliverable> {
  const outDir = await mkdtemp(path.join(os.tmpdir(), 'hw-diff-'))
  const patchFile = path.join(outDir, 'patch.diff')
  const binFile = path.join(outDir, 'binary.txt')
  const ignFile = path.join(outDir, 'ignored.txt')
  const flags = GIT_FLAGS.join(' ')
  const diff = `-c core.quotepath=false diff --cached --binary --no-color --no-ext-diff ${base}`
  try {
    if (!/^[0-9a-f]{4,64}$/.test(base)) throw new Error(`not a commit id: ${JSON.stringify(base)}`)
    // Binary files show as "-<TAB>-<TAB>path" in --numstat; each is reset to the baseline in the index.
    const script = [
      'set -e',
      `git ${flags} add -A`,
      `git ${flags} -c core.quotepath=false diff --cached --numstat --no-renames ${base} | awk -F '\t' '$1 == "-" && $2 == "-" { print $3 }' > "$2"`,
      `while IFS= read -r p; do git ${flags} reset -q ${base} -- "$p"; done < "$2"`,
      `git ${flags} -c core.quotepath=false ls-files --others --ignored --exclude-standard --directory | head -n 1000 > "$3"`,
      `git ${flags} ${diff} > "$1"`,
    ].join('\n')
    const [run] = await runSandboxJob(
      sandbox,
      { writable: [workspace, outDir], readOnly: [] },
      [
        {
          command: 'sh',
          args: ['-c', script, 'hw-diff', patchFile, binFile, ignFile],
          cwd: workspace,
          env: gitEnv(),
        },
      ],
      { timeoutMs: 10 * 60_000 },
    )
    if (run?.exitCode !== 0) {
      throw new Error(run?.output.trim().split('\n')[0] || run?.spawnError || 'git failed')
    }
    const lines = async (f: string) =>
      (await readBack(f).catch(() => '')).split('\n').filter((l) => l.trim() !== '')
    const excluded = [
      ...(await lines(binFile)).map((p) => ({ path: p, why: 'binary' as const })),
      ...(await lines(ignFile)).map((p) => ({ path: p, why: 'ignored' as const })),
    ]
    const raw = await readBackBytes(patchFile)
    // Bytes that are not UTF-8 (a binary-ish file, a Latin-1 source) are decoded with U+FFFD and counted.
    const { text: stdout, malformed } = decodeUtf8(raw)
    const bytes = raw.length
    return {
      patch: stdout,
      bytes,
      sha256: bytes > 0 ? sha256(raw) : null,
      files_changed: stdout.match(/^diff --git /gm)?.length ?? 0,
      test_only: testOnlyDiff(stdout),
      non_utf8: malformed,
      error: null,
      excluded,
    }
  } catch (e) {
    const msg = (e as Error).message.trim().split('\n')[0] || 'git failed'
    return { patch: '', bytes: 0, sha256: null, files_changed: 0, error: `git diff failed: ${msg}` }
  } finally {
    await rm(outDir, { recursive: true, force: true })
  }
}
