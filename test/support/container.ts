import { containerBackend } from '../../src/sandbox/container/backend.js'
import { ensureBaseImage } from '../../src/sandbox/container/base-image.js'
import { probeRuntime } from '../../src/sandbox/container/probe.js'
import type { ContainerRuntime } from '../../src/sandbox/container/runtime.js'
import type { ContainerSetting } from '../../src/sandbox/container/settings.js'
import { noneBackend } from '../../src/sandbox/none.js'
import { BASE_IMAGE_REF } from '../../src/util/image-ref.js'

/**
 * The container runtime and Debian base image the container tests use: probed once (docker or
 * podman), the base image built from Debian's packages on first use (about a minute) and cached.
 * `reason` says why the tests skip when no runtime can run a container here (printed by the caller).
 */
export interface ContainerEnv {
  runtime: ContainerRuntime | null
  baseRef: string
  reason: string | null
}

let envP: Promise<ContainerEnv> | null = null

export function containerEnv(): Promise<ContainerEnv> {
  envP ??= (async () => {
    if (process.platform !== 'linux') return { runtime: null, baseRef: BASE_IMAGE_REF, reason: 'needs Linux' }
    const first = await probeRuntime('auto', null)
    if (!first.ok) return { runtime: null, baseRef: BASE_IMAGE_REF, reason: first.reason }
    try {
      const base = await ensureBaseImage(first.runtime)
      const trial = await probeRuntime(first.runtime.name, base.ref)
      if (!trial.ok) return { runtime: null, baseRef: base.ref, reason: trial.reason }
      return { runtime: trial.runtime, baseRef: base.ref, reason: null }
    } catch (e) {
      return { runtime: null, baseRef: BASE_IMAGE_REF, reason: `no base image: ${(e as Error).message}` }
    }
  })()
  return envP
}

export function testSetting(over: Partial<ContainerSetting> = {}): ContainerSetting {
  return {
    runtime: 'auto',
    image: BASE_IMAGE_REF,
    network: 'proxy-only',
    resources: { cpus: 1, memory_mb: 512, pids: 256, storage_mb: null },
    user: '0:0',
    ...over,
  }
}

export function testBackend(over: Partial<ContainerSetting> = {}) {
  return containerBackend(testSetting(over), async () => noneBackend)
}
