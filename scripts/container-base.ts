/**
 * Builds (or finds) the offline Debian base image the container backend and its tests use, once,
 * before the test suite: `npx tsx scripts/container-base.ts`. Prints the runtime, the image and its id,
 * or one line saying why no container runtime can run here (exit 0: the container tests then skip).
 */
import { ensureBaseImage } from '../src/sandbox/container/base-image.js'
import { probeRuntime } from '../src/sandbox/container/probe.js'

const probe = await probeRuntime('auto', null)
if (!probe.ok) {
  console.log(`no container runtime: ${probe.reason}`)
} else {
  try {
    const base = await ensureBaseImage(probe.runtime, { log: (l) => console.log(l) })
    console.log(
      `${probe.runtime.name} ${probe.runtime.version}: ${base.ref} ${base.id}${base.cached ? ' (cached)' : ` (built in ${Math.round(base.ms / 1000)} s)`}`,
    )
  } catch (e) {
    console.log(`base image not built: ${(e as Error).message}`)
  }
}
