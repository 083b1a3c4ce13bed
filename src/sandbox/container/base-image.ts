import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import lockfile from 'proper-lockfile'
import { BASE_IMAGE_REF } from '../../util/image-ref.js'
import { imageId } from './image.js'
import { type ContainerRuntime, cli, lastLines, must } from './runtime.js'

/** The Debian base image: a minbase root file system from Debian's packages, no registry involved. */
export interface BaseImageSpec {
  suite: string
  /** Packages added to minbase. */
  include: string[]
}

export const DEFAULT_BASE: BaseImageSpec = {
  suite: 'bookworm',
  include: ['ca-certificates', 'git', 'patch', 'python3', 'socat'],
}

/**
 * `deb <uri> <suite> <components>` lines for `suite` from apt's configured sources (pure): one-line
 * `sources.list` entries and deb822 `.sources` stanzas, keeping `Types: deb` entries whose suite is
 * `suite` or `suite-*` (updates, security) and that are not disabled (`Enabled: no`).
 */
export function debLines(files: { name: string; text: string }[], suite: string): string[] {
  const out: string[] = []
  const wanted = (s: string) => s === suite || s.startsWith(`${suite}-`) || s.startsWith(`${suite}/`)
  for (const f of files) {
    if (f.name.endsWith('.sources')) {
      for (const stanza of f.text.split(/\n\s*\n/)) {
        const field = (k: string) =>
          stanza
            .split('\n')
            .find((l) => l.toLowerCase().startsWith(`${k.toLowerCase()}:`))
            ?.slice(k.length + 1)
            .trim() ?? ''
        if (!field('Types').split(/\s+/).includes('deb') || /^no$/i.test(field('Enabled'))) continue
        for (const uri of field('URIs').split(/\s+/).filter(Boolean)) {
          for (const s of field('Suites').split(/\s+/).filter(wanted))
            out.push(`deb ${uri} ${s} ${field('Components')}`)
        }
      }
    } else if (f.name.endsWith('.list')) {
      for (const raw of f.text.split('\n')) {
        const line = raw.replace(/#.*/, '').trim()
        const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.+)$/.exec(line)
        if (m?.[1] && m[2] && m[3] && wanted(m[2])) out.push(`deb ${m[1]} ${m[2]} ${m[3]}`)
      }
    }
  }
  return [...new Set(out)]
}

/** apt's configured sources on this machine (sources.list and sources.list.d/*.list|*.sources). */
export async function aptSources(root = '/etc/apt'): Promise<{ name: string; text: string }[]> {
  const files: { name: string; text: string }[] = []
  const main = await readFile(path.join(root, 'sources.list'), 'utf8').catch(() => null)
  if (main !== null) files.push({ name: 'sources.list', text: main })
  const dir = path.join(root, 'sources.list.d')
  for (const name of (await readdir(dir).catch(() => [] as string[])).sort()) {
    const text = await readFile(path.join(dir, name), 'utf8').catch(() => null)
    if (text !== null) files.push({ name, text })
  }
  return files
}

/** Content key of a base image: what goes in (suite, packages, sources), not when it was built. */
export function baseKey(spec: BaseImageSpec, lines: string[]): string {
  const body = JSON.stringify({
    v: 1,
    variant: 'minbase',
    suite: spec.suite,
    include: [...spec.include].sort(),
    lines,
  })
  return createHash('sha256').update(body).digest('hex').slice(0, 16)
}

export interface BaseImage {
  ref: string
  /** The tag naming its content key. */
  keyRef: string
  id: string
  /** Found already built (no mmdebstrap run). */
  cached: boolean
  ms: number
}

/**
 * Build (or find) the Debian base image: `mmdebstrap --variant=minbase --mode=root` with `include`
 * from apt's configured Debian sources, then `<runtime> import` as `<ref base>:<suite>-<key>` and
 * tagged `ref`. Cached by the content key: a second call runs nothing. Needs root and mmdebstrap;
 * throws an Error naming the step and the tool's last lines otherwise.
 */
export async function ensureBaseImage(
  rt: ContainerRuntime,
  opts: { ref?: string; spec?: BaseImageSpec; log?: (line: string) => void } = {},
): Promise<BaseImage> {
  const t0 = performance.now()
  const spec = opts.spec ?? DEFAULT_BASE
  const ref = opts.ref ?? BASE_IMAGE_REF
  const lines = debLines(await aptSources(), spec.suite)
  if (lines.length === 0)
    throw new Error(`no apt source for Debian ${spec.suite} is configured on this machine (/etc/apt)`)
  const keyRef = `${ref.replace(/:[^:/]+$/, '')}:${spec.suite}-${baseKey(spec, lines)}`
  const cached = async (): Promise<BaseImage | null> => {
    const found = await imageId(rt, keyRef)
    if (!found) return null
    if ((await imageId(rt, ref)) !== found) await must(rt, ['tag', keyRef, ref])
    return { ref, keyRef, id: found, cached: true, ms: performance.now() - t0 }
  }
  const hit = await cached()
  if (hit) return hit
  // One build per machine at a time: a second process waits for the first and then finds its image.
  const lockDir = path.join(os.tmpdir(), 'harness-watch-base-image')
  await mkdir(lockDir, { recursive: true })
  const release = await lockfile.lock(lockDir, {
    lockfilePath: path.join(lockDir, `${keyRef.replace(/[^A-Za-z0-9_.-]/g, '_')}.lock`),
    realpath: false,
    stale: 60_000,
    update: 10_000,
    retries: { retries: 200, minTimeout: 1_000, maxTimeout: 5_000 },
  })
  try {
    return (await cached()) ?? (await buildBase(rt, spec, lines, ref, keyRef, t0, opts.log))
  } finally {
    await release().catch(() => {})
  }
}

async function buildBase(
  rt: ContainerRuntime,
  spec: BaseImageSpec,
  lines: string[],
  ref: string,
  keyRef: string,
  t0: number,
  log: ((line: string) => void) | undefined,
): Promise<BaseImage> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hw-base-'))
  try {
    const tar = path.join(dir, 'base.tar')
    log?.(`building the base image ${keyRef} from Debian's packages (mmdebstrap, about a minute)`)
    const mm = await cli(
      'mmdebstrap',
      ['--variant=minbase', '--mode=root', `--include=${spec.include.join(',')}`, spec.suite, tar, ...lines],
      { timeoutMs: 20 * 60_000, env: { TMPDIR: dir } },
    )
    if (mm.missing)
      throw new Error('mmdebstrap is not installed (Debian/Ubuntu: sudo apt-get install mmdebstrap)')
    if (mm.exitCode !== 0) throw new Error(`mmdebstrap failed: ${lastLines(mm.stderr || mm.stdout, 5)}`)
    await must(rt, ['import', '--change', 'CMD ["/bin/bash"]', tar, keyRef], 10 * 60_000)
    await must(rt, ['tag', keyRef, ref])
    const id = await imageId(rt, keyRef)
    if (!id) throw new Error(`${keyRef} was imported but cannot be inspected`)
    return { ref, keyRef, id, cached: false, ms: performance.now() - t0 }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
