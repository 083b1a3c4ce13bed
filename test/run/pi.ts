import { beforeAll } from 'vitest'
import { defaultCacheDir } from '../../src/harnesses/install.js'
import { piAdapter } from '../../src/harnesses/pi.js'

export const PI_VERSION = '0.73.1'

/**
 * Installs real Pi into the shared harness cache before the file's tests; the returned check skips a
 * test, saying why, when Pi cannot be installed here.
 */
export function usePi(): (ctx: { skip: () => void }) => void {
  let reason = ''
  beforeAll(async () => {
    try {
      await piAdapter.install(PI_VERSION, { cacheDir: defaultCacheDir(), log: () => {} })
    } catch (e) {
      reason = `Pi ${PI_VERSION} cannot be installed here: ${(e as Error).message.split('\n')[0]}`
    }
  }, 600_000)
  return (ctx) => {
    if (!reason) return
    console.warn(`skipped: ${reason}`)
    ctx.skip()
  }
}
