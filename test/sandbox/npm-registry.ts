import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { execa } from 'execa'

/** One package version to serve: its package.json fields and files (package.json is written from `manifest`). */
export interface RegistryPackage {
  manifest: { name: string; version: string } & Record<string, unknown>
  files: Record<string, string>
}

/** A running local registry: `url` ends with `/`; `requests` lists the paths asked for. */
export interface LocalRegistry {
  url: string
  requests: string[]
  close(): Promise<void>
}

/**
 * A tiny npm registry on 127.0.0.1 following the registry contract npm uses for installs: `GET /<name>`
 * answers the packument (`name`, `dist-tags.latest`, `versions[v]` = the package.json plus `dist` with
 * `tarball`, `shasum` (sha1 hex) and `integrity` (sha512 SRI)); `GET /<name>/-/<name>-<v>.tgz` the
 * gzipped tarball whose files sit under `package/`. Anything else is 404. Tarballs are made with `tar`
 * in `workDir`.
 */
export async function startRegistry(packages: RegistryPackage[], workDir: string): Promise<LocalRegistry> {
  const tarballs = new Map<string, Buffer>()
  const docs = new Map<
    string,
    { name: string; 'dist-tags': { latest: string }; versions: Record<string, unknown> }
  >()
  const requests: string[] = []
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? '/').split('?')[0] ?? '/')
    requests.push(url)
    const tgz = tarballs.get(url)
    if (tgz) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tgz.length })
      res.end(tgz)
      return
    }
    const doc = docs.get(url.slice(1))
    if (doc) {
      const body = JSON.stringify(doc)
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(body)
      return
    }
    res.writeHead(404, { 'content-type': 'application/json' })
    res.end('{"error":"not found"}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  for (const [i, pkg] of packages.entries()) {
    const { name, version } = pkg.manifest
    const dir = path.join(workDir, `pkg-${i}`)
    const root = path.join(dir, 'package')
    mkdirSync(root, { recursive: true })
    writeFileSync(path.join(root, 'package.json'), JSON.stringify(pkg.manifest, null, 2))
    for (const [rel, text] of Object.entries(pkg.files)) {
      mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
      writeFileSync(path.join(root, rel), text, { mode: 0o755 })
    }
    const file = path.join(dir, `${name}-${version}.tgz`)
    await execa('tar', ['-czf', file, '-C', dir, 'package'])
    const data = readFileSync(file)
    const tarPath = `/${name}/-/${name}-${version}.tgz`
    tarballs.set(tarPath, data)
    const doc = docs.get(name) ?? { name, 'dist-tags': { latest: version }, versions: {} }
    doc.versions[version] = {
      ...pkg.manifest,
      hasInstallScript: true,
      dist: {
        tarball: `${url}${tarPath.slice(1)}`,
        shasum: createHash('sha1').update(data).digest('hex'),
        integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
      },
    }
    docs.set(name, doc)
  }
  return {
    url,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
