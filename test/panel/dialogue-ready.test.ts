import { describe, expect, it } from 'vitest'
import { loadManifest } from '../../src/manifest/load.js'
import { assertDialogueReady, dialogueInstances } from '../../src/panel/bridge-capable.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { HwError } from '../../src/util/errors.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

const CELLS = [
  { id: 'pi', harness: 'pi', version: '0.73.1' },
  { id: 'ad', harness: 'agentd', version: '0.4.0' },
]

async function check(over: Record<string, unknown>, instances: string[]) {
  const file = writeManifest(
    baseManifest({
      panel: { source: 'builtin', name: 'bridge-state', instances },
      cells: CELLS,
      baseline: 'pi',
      ...over,
    }),
  )
  const loaded = await loadManifest(file, { runnable: true })
  const panel = await resolvePanel(loaded.manifest, loaded.dir, file, loaded.locate)
  const err = await assertDialogueReady(loaded.manifest, panel, loaded.locate).then(
    () => null,
    (e: unknown) => e as HwError,
  )
  return { file, panel, err }
}

describe('validate refuses a multi-turn bridge panel it cannot run', () => {
  it('without user_model: named at the panel field with file and line; a harness without resume at its field', async () => {
    const { file, panel, err } = await check({}, ['state-cancel-order', 'state-user-address'])
    expect(await dialogueInstances(panel)).toEqual(['state-user-address'])
    expect(err).toBeInstanceOf(HwError)
    expect(err?.code).toBe('dialogue_unsupported')
    expect(err?.message).toBe(
      'the panel has 1 multi-turn bridge task(s) (e.g. state-user-address) the manifest cannot run',
    )
    expect(err?.details).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+ user_model: missing; 1 task\\(s\\) of the panel \\(e\\.g\\. state-user-address\\) talk with a simulated user`,
        ),
      ),
      expect.stringMatching(/:\d+:\d+ cells\[1\]\.harness: agentd has no documented headless session resume/),
    ])
  })

  it('passes with a user_model and resumable harnesses; a single-turn panel needs none', async () => {
    const user_model = { id: 'user-sim', provider: 'scripted', max_turns: 4 }
    expect((await check({ user_model, cells: [CELLS[0]] }, ['state-user-address'])).err).toBeNull()
    expect((await check({ cells: CELLS }, ['state-cancel-order'])).err).toBeNull()
  })

  it('a user_model on another provider, or a turn limit out of range, is refused at its field', async () => {
    const at = async (user_model: unknown) =>
      loadManifest(writeManifest(baseManifest({ user_model })), { runnable: true }).then(
        () => null,
        (e: unknown) => (e as HwError).details?.join('\n') ?? '',
      )
    expect(await at({ id: 'u', provider: 'openai' })).toMatch(
      /:\d+:\d+ user_model\.provider: user_model\.provider "openai" must equal model\.provider "scripted"/,
    )
    expect(await at({ id: 'u', provider: 'scripted', max_turns: 0 })).toMatch(
      /:\d+:\d+ user_model\.max_turns/,
    )
    expect(await at({ id: 'u', provider: 'scripted', extra: 1 })).toMatch(/user_model/)
  })
})
