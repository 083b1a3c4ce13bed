// A cancelled GitHub job (issue 11 point 3): the runner sends the `run` step's process SIGINT, then
// SIGTERM 7.5 s later. The bundled action, run as the runner runs it (scripts/run-action.mjs, which
// forwards a signal to the step as that cancellation sequence), must kill the harness's whole tree,
// record the stopped attempt, write leg.json and end the step well before the SIGTERM.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { manifestAndPlan, readAttempts, readLegJson, useRunFixture } from '../run/fixture.js'
import { sleeps, treeCommand, uniqueMark, waitFor } from '../run/tree.js'
import { actionCheckout, built, startAction } from './support.js'

const fx = useRunFixture()

describe.skipIf(!built)('the bundled action: a cancelled `run` step', () => {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`${sig} to the runner: the tree is killed, the attempt recorded as stopped, the step fails at once`, async () => {
      const mark = uniqueMark(sig === 'SIGINT' ? 6000 : 7000)
      const cell = {
        id: 'tree',
        harness: 'command',
        version: '1.0.0',
        config: { command: treeCommand(mark) },
      }
      const { file, plan } = await manifestAndPlan(
        fx,
        [cell],
        {
          panel: { source: 'tasks', path: './panel', instances: ['js-add', 'txt-greet'] },
          budgets: { timeout_s: 600 },
        },
        `cancel-${sig}.yml`,
      )
      const planFile = path.join(fx.root, `cancel-${sig}.plan.json`)
      writeFileSync(planFile, JSON.stringify(plan))
      const out = path.join(fx.root, 'out', `cancel-${sig}`)
      const ws = mkdtempSync(path.join(tmpdir(), 'hw-ws-'))
      const { runner, result } = startAction(actionCheckout(), ws, {
        command: 'run',
        manifest: file,
        plan: planFile,
        leg: 'tree-s0',
        out,
      })
      expect(await waitFor(() => sleeps(mark).length >= 3, 60_000)).toBe(true)
      const sent = Date.now()
      runner.kill(sig)
      const r = await result
      // The step ended on the first signal (SIGINT to the action), before the runner's SIGTERM.
      expect(Date.now() - sent).toBeLessThan(7500)
      expect(r.exitCode).toBe(1)
      expect(await waitFor(() => sleeps(mark).length === 0, 5000)).toBe(true)
      const records = readAttempts(out)
      expect(records).toHaveLength(1)
      expect(records[0]).toMatchObject({
        instance_id: 'js-add',
        attempt: 1,
        final: false,
        exit: { class: 'infra', reason: 'stopped: received SIGINT' },
        outcome: 'infra_error',
      })
      const leg = readLegJson(out)
      expect(leg).toMatchObject({ status: 'partial', error: 'aborted', attempts: 1 })
      expect(leg.ended_at).not.toBeNull()
      expect(r.annotations.map((a) => `${a.kind}: ${a.message}`)).toContainEqual(
        'error: leg tree-s0 stopped (received SIGINT): 1 attempt(s) recorded',
      )
      expect(r.summary).toMatch(/leg `tree-s0`: partial \(stopped: received SIGINT\)/)
      expect(r.outputs).toMatchObject({ artifact: plan.legs[0]!.artifact, 'leg-dir': out })
    }, 120_000)
  }
})
