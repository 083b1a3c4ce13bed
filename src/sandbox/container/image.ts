import { createHash } from 'node:crypto'
import { readdir, readFile, readlink, stat } from 'node:fs/promises'
import path from 'node:path'
import { parseImageRef } from '../../util/image-ref.js'
import { type ContainerRuntime, cli, lastLines } from './runtime.js'

/** The image's id (`sha256:…`) in the local store, or null when it is not there. */
export async function imageId(
  rt: Pick<ContainerRuntime, 'bin' | 'env'>,
  ref: string,
): Promise<string | null> {
  const r = await cli(rt.bin, ['image', 'inspect', '--format', '{{.Id}}', ref], {
    env: rt.env,
    timeoutMs: 30_000,
  })
  if (r.exitCode !== 0) return null
  const id = r.stdout.trim().split('\n')[0] ?? ''
  return id.startsWith('sha256:') ? id : `sha256:${id}`
}

/** Digests the local store knows the image by (RepoDigests), as `sha256:…`. */
async function repoDigests(rt: ContainerRuntime, ref: string): Promise<string[]> {
  const r = await cli(rt.bin, ['image', 'inspect', '--format', '{{json .RepoDigests}}', ref], { env: rt.env })
  try {
    return (JSON.parse(r.stdout) as string[]).map((d) => d.slice(d.indexOf('@') + 1))
  } catch {
    return []
  }
}

/** A resolved image: what an attempt records as provenance. */
export interface ResolvedImage {
  ref: string
  id: string
  /** How it was obtained: found locally, pulled, built from a Dockerfile (cache hit or not). */
  source: 'local' | 'pulled' | 'built' | 'build-cache'
}

/** An image problem a person can fix (bad reference, digest mismatch, build failure); `tail` = the tool's last lines. */
export class ImageError extends Error {
  constructor(
    readonly kind: 'bad_reference' | 'digest_mismatch' | 'pull_failed' | 'build_failed',
    message: string,
    readonly tail: string = '',
  ) {
    super(message)
  }
}

/**
 * Find `ref` locally or pull it (never for `localhost/` names), and check a pinned digest: the
 * image's id or one of its repository digests must equal it. Throws ImageError.
 */
export async function resolveImage(
  rt: ContainerRuntime,
  ref: string,
  signal?: AbortSignal,
): Promise<ResolvedImage> {
  const parsed = parseImageRef(ref)
  if (!parsed) {
    throw new ImageError(
      'bad_reference',
      `not a valid image reference: ${JSON.stringify(ref)} (expected name[:tag][@sha256:<64 hex>])`,
    )
  }
  let source: ResolvedImage['source'] = 'local'
  let id = await imageId(rt, ref)
  if (!id && parsed.digest) id = await imageId(rt, `${parsed.name}${parsed.tag ? `:${parsed.tag}` : ''}`)
  if (!id) {
    if (parsed.name.startsWith('localhost/')) {
      throw new ImageError(
        'pull_failed',
        `image ${ref} is not in the local store (a localhost/ image is never pulled)`,
      )
    }
    const r = await cli(rt.bin, ['pull', ref], { env: rt.env, timeoutMs: 30 * 60_000, signal })
    if (r.exitCode !== 0)
      throw new ImageError('pull_failed', `pulling ${ref} failed`, lastLines(r.stderr || r.stdout, 5))
    id = await imageId(rt, ref)
    if (!id) throw new ImageError('pull_failed', `${ref} was pulled but cannot be inspected`)
    source = 'pulled'
  }
  if (parsed.digest && id !== parsed.digest && !(await repoDigests(rt, ref)).includes(parsed.digest)) {
    throw new ImageError(
      'digest_mismatch',
      `image ${ref}: the local image is ${id}, not the pinned ${parsed.digest}`,
    )
  }
  return { ref, id, source }
}

/** sha256 over a folder's files (relative path, mode, content; links by target), sorted: a build context's key. */
export async function contextHash(dir: string): Promise<string> {
  const h = createHash('sha256')
  const walk = async (rel: string): Promise<void> => {
    const entries = (await readdir(path.join(dir, rel), { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )
    for (const e of entries) {
      const r = path.join(rel, e.name)
      const abs = path.join(dir, r)
      if (e.isDirectory()) {
        h.update(`d ${r}\n`)
        await walk(r)
      } else if (e.isSymbolicLink()) {
        h.update(`l ${r} ${await readlink(abs)}\n`)
      } else if (e.isFile()) {
        const st = await stat(abs)
        h.update(`f ${r} ${st.mode & 0o111 ? 'x' : '-'} ${st.size}\n`)
        h.update(await readFile(abs))
      }
    }
  }
  await walk('')
  return h.digest('hex')
}

/** The FROM images of a Dockerfile (pure; `ARG` substitution not attempted; stage names excluded). */
export function fromImages(dockerfile: string): string[] {
  const stages = new Set<string>()
  const out: string[] = []
  for (const raw of dockerfile.split('\n')) {
    const m = /^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(raw)
    if (!m?.[1]) continue
    if (!stages.has(m[1].toLowerCase())) out.push(m[1])
    if (m[2]) stages.add(m[2].toLowerCase())
  }
  return out
}

/**
 * Build a task's `environment/` folder (its Dockerfile) as `localhost/hw-task-<name>:<context hash>`,
 * once per content: an image with that tag already present is a cache hit. Podman gets `--pull=never`
 * where every base is local (offline), else `--pull=missing`. Throws ImageError `build_failed` with the build's last
 * lines.
 */
export async function buildTaskImage(
  rt: ContainerRuntime,
  contextDir: string,
  name: string,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<ResolvedImage> {
  const key = (await contextHash(contextDir)).slice(0, 16)
  const safe =
    name
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[^a-z0-9]+/, '')
      .slice(0, 100) || 'task'
  const ref = `localhost/hw-task-${safe}:${key}`
  const hit = await imageId(rt, ref)
  if (hit) return { ref, id: hit, source: 'build-cache' }
  const dockerfile = await readFile(path.join(contextDir, 'Dockerfile'), 'utf8').catch(() => null)
  if (dockerfile === null) throw new ImageError('build_failed', `${contextDir} has no Dockerfile`)
  const bases = fromImages(dockerfile).filter((b) => b.toLowerCase() !== 'scratch')
  const local = (await Promise.all(bases.map((b) => imageId(rt, b)))).every((id) => id !== null)
  // Docker's build pulls only what is missing by default; podman is told (never = offline).
  // Docker's classic builder keeps the container of a step that failed unless told (`--force-rm`;
  // BuildKit accepts and ignores it); podman removes it by default.
  const flags = rt.name === 'podman' ? [`--pull=${local ? 'never' : 'missing'}`] : ['--force-rm']
  const r = await cli(rt.bin, ['build', ...flags, '-t', ref, contextDir], {
    env: rt.env,
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
  })
  if (r.exitCode !== 0) {
    const why = r.timedOut ? `timed out after ${Math.round(opts.timeoutMs / 1000)} s` : `exited ${r.exitCode}`
    throw new ImageError(
      'build_failed',
      `building ${contextDir}/Dockerfile ${why}`,
      lastLines(`${r.stdout}\n${r.stderr}`, 8),
    )
  }
  const id = await imageId(rt, ref)
  if (!id) throw new ImageError('build_failed', `${ref} was built but cannot be inspected`)
  return { ref, id, source: 'built' }
}
