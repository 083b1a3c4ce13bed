import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'

/**
 * The platform facts npm harness packages use to pick their native build (after each package's own
 * loader: OpenCode's postinstall.mjs, Claude Code's install.cjs, Copilot's npm-loader.js, Codex's
 * bin/codex.js). Read once; pure helpers below take it as an argument for tests.
 */
export interface NativeTarget {
  /** `linux`, `darwin`, `win32`. */
  platform: string
  /** `x64`, `arm64`. */
  arch: string
  /** Linux without glibc (Alpine). */
  musl: boolean
  /** x64 CPU with AVX2 (OpenCode ships a `-baseline` build for CPUs without it). */
  avx2: boolean
}

export function hostTarget(): NativeTarget {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined
  const musl = process.platform === 'linux' && !report?.header?.glibcVersionRuntime
  let avx2 = false
  if (process.arch === 'x64' && process.platform === 'linux') {
    try {
      avx2 = /(^|\s)avx2(\s|$)/i.test(readFileSync('/proc/cpuinfo', 'utf8'))
    } catch {
      avx2 = false
    }
  } else if (process.arch === 'x64') {
    avx2 = true
  }
  return { platform: process.platform, arch: process.arch, musl, avx2 }
}

/** The first candidate path that exists, else the first candidate (so the error names a real expectation). */
export function firstExisting(candidates: string[]): string {
  return candidates.find((c) => existsSync(c)) ?? candidates[0] ?? ''
}

/** `node_modules/<pkg>` inside an install folder. */
export function modulePath(root: string, pkg: string, ...rest: string[]): string {
  return path.join(root, 'node_modules', ...pkg.split('/'), ...rest)
}

/** Codex's Rust target triple for a platform (bin/codex.js). */
export function codexTriple(t: NativeTarget): string | null {
  if (t.platform === 'linux' && t.arch === 'x64') return 'x86_64-unknown-linux-musl'
  if (t.platform === 'linux' && t.arch === 'arm64') return 'aarch64-unknown-linux-musl'
  if (t.platform === 'darwin' && t.arch === 'x64') return 'x86_64-apple-darwin'
  if (t.platform === 'darwin' && t.arch === 'arm64') return 'aarch64-apple-darwin'
  return null
}
