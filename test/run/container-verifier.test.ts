import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { sharedVerifierNetwork, verifierPlacement } from '../../src/run/container-request.js'
import { runLeg } from '../../src/run/leg.js'
import { containerEnv } from '../support/container.js'
import { manifestAndPlan, readAttempts, useRunFixture } from './fixture.js'

const env = await containerEnv()
if (env.reason) console.warn(`container verifier tests skipped: ${env.reason}`)

// The probe harness lists what it can see while it runs, leaves a file in /tmp and a background
// process behind, and edits the workspace.
const PROBE = [
  'echo "tests-dir: $(ls -A /tests 2>&1 | head -n 3 | tr "\\n" " ")"',
  'echo "tests-files-found: $(find / -xdev -name secret-expected.txt -not -path "/proc/*" 2>/dev/null | head -n 3 | tr "\\n" " ")"',
  'echo "logs-dir: $(ls -A /logs 2>&1 | tr "\\n" " ")"',
  'echo marker > /tmp/agent-was-here',
  '(sleep 987 &)',
  'echo solved > answer.txt',
].join('; ')

// The verifier reports where it runs: the agent's /tmp file, the agent's leftover process, its own files.
const TEST_SH = `#!/usr/bin/env bash
if [ -f /tmp/agent-was-here ]; then echo "container: agent"; else echo "container: fresh"; fi
for p in /proc/[0-9]*; do tr '\\0' ' ' < "$p/cmdline" 2>/dev/null; echo; done | grep -c "slee[p] 987" | sed 's/^/leftover-agent-processes: /'
echo "tests-seen: $(ls /tests | tr '\\n' ' ')"
echo "answer: $(cat answer.txt)"
# Graders use git in the workspace (SWE-bench's apply the test patch): it must work after the host read the patch.
if git -c user.name=v -c user.email=v@example.org commit -q -am graded 2>&1; then echo "git-commit: ok"; fi
if [ "$(cat answer.txt)" = solved ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
`

const fx = useRunFixture()

function task(id: string, toml: string): void {
  const dir = path.join(fx.root, 'cpanel', id)
  for (const d of ['environment', 'tests']) mkdirSync(path.join(dir, d), { recursive: true })
  writeFileSync(path.join(dir, 'instruction.md'), 'Write "solved" to answer.txt.\n')
  writeFileSync(path.join(dir, 'task.toml'), `version = "1.0"\n${toml}`)
  writeFileSync(path.join(dir, 'environment', 'answer.txt'), 'unsolved\n')
  writeFileSync(path.join(dir, 'tests', 'test.sh'), TEST_SH)
  writeFileSync(path.join(dir, 'tests', 'secret-expected.txt'), 'solved\n')
}

async function run(name: string, isolation: 'task' | 'fresh') {
  const { loaded, plan } = await manifestAndPlan(
    fx,
    [{ id: 'probe', harness: 'command', version: '1', config: { command: PROBE } }],
    {
      panel: { source: 'tasks', path: './cpanel' },
      benchmark: {
        family: 'fixture',
        revision: 'r1',
        verifier: { kind: 'task-tests', timeout_s: 60, isolation },
      },
      sandbox: {
        backend: 'container',
        container: {
          runtime: 'auto',
          image: env.baseRef,
          network: 'proxy-only',
          resources: { cpus: 1, memory_mb: 512, pids: 256 },
        },
      },
      retries: { max: 0, on: ['infra'], backoff_s: 0 },
    },
    `${name}.yml`,
  )
  const dir = path.join(fx.root, 'out', name)
  await runLeg({ loaded, plan, leg: 'probe-s0', outDir: dir, runId: 'r', workRoot: fx.work })
  const attempts = readAttempts(dir)
  const logs = (id: string, file: string) => {
    const a = attempts.find((x) => x.instance_id === id)
    return readFileSync(path.join(dir, a?.logs_dir ?? '', file), 'utf8')
  }
  return { attempts, logs }
}

describe.skipIf(env.runtime === null)("the verifier follows Harbor's rule (real engine)", () => {
  it('shared by default, fresh for environment_mode "separate"; the agent never sees tests/', async () => {
    mkdirSync(path.join(fx.root, 'cpanel'), { recursive: true })
    task('harbor-shared', '[verifier]\ntimeout_sec = 60\n')
    task('harbor-separate', '[verifier]\ntimeout_sec = 60\nenvironment_mode = "separate"\n')
    const { attempts, logs } = await run('task-rule', 'task')
    expect(attempts).toHaveLength(2)
    for (const id of ['harbor-shared', 'harbor-separate']) {
      const a = attempts.find((x) => x.instance_id === id)
      expect(a, `${id}: ${a?.exit.reason}`).toMatchObject({
        outcome: 'resolved',
        verifier: { status: 'pass', reward: 1 },
      })
      // During the agent's run: no /tests, no file of tests/ anywhere, no /logs.
      const out = logs(id, 'stdout.txt')
      expect(out).toMatch(/^tests-dir: ls: cannot access '\/tests': No such file or directory $/m)
      expect(out).toMatch(/^tests-files-found: $/m)
      expect(out).toMatch(/^logs-dir: ls: cannot access '\/logs': No such file or directory $/m)
      // After it: tests/ is there for the verifier, and the agent's leftover process is gone.
      const v = logs(id, 'verifier.log')
      expect(v).toContain('tests-seen: secret-expected.txt test.sh ')
      expect(v).toContain('leftover-agent-processes: 0')
      expect(v).toContain('answer: solved')
      expect(v).toContain('git-commit: ok')
    }
    const shared = attempts.find((x) => x.instance_id === 'harbor-shared')
    const separate = attempts.find((x) => x.instance_id === 'harbor-separate')
    expect(logs('harbor-shared', 'verifier.log')).toContain('container: agent')
    expect(shared?.environment).toMatchObject({
      verifier_container: 'agent',
      verifier_container_reason: null,
      network: { agent: 'proxy-only', verifier: 'none' },
    })
    expect(logs('harbor-separate', 'verifier.log')).toContain('container: fresh')
    expect(separate?.environment).toMatchObject({
      verifier_container: 'fresh',
      verifier_container_reason: 'task.toml [verifier] environment_mode = "separate"',
    })
  }, 600_000)

  it('benchmark.verifier.isolation: fresh gives every task a fresh container', async () => {
    const { attempts, logs } = await run('fresh', 'fresh')
    const a = attempts.find((x) => x.instance_id === 'harbor-shared')
    expect(a).toMatchObject({ outcome: 'resolved', verifier: { status: 'pass' } })
    expect(logs('harbor-shared', 'verifier.log')).toContain('container: fresh')
    expect(a?.environment).toMatchObject({
      verifier_container: 'fresh',
      verifier_container_reason: 'benchmark.verifier.isolation: fresh',
    })
  }, 600_000)
})

describe('verifierPlacement (pure)', () => {
  const base = {
    manifest: 'task' as const,
    environmentMode: 'shared' as const,
    agentAlive: true,
    agentNetwork: 'proxy-only' as const,
    verifierNetwork: 'none' as const,
  }
  it("Harbor's default is the agent's container; each exception says why", () => {
    expect(verifierPlacement(base)).toEqual({ isolation: 'shared', reason: null })
    expect(verifierPlacement({ ...base, manifest: 'fresh' }).reason).toBe(
      'benchmark.verifier.isolation: fresh',
    )
    expect(verifierPlacement({ ...base, environmentMode: 'separate' }).isolation).toBe('fresh')
    expect(verifierPlacement({ ...base, agentAlive: false }).reason).toBe("the agent's container had ended")
    expect(verifierPlacement({ ...base, verifierNetwork: 'public' }).reason).toBe(
      "the verifier's network (public) is not the agent container's (proxy-only)",
    )
    expect(verifierPlacement({ ...base, verifierNetwork: 'public', agentNetwork: 'public' }).isolation).toBe(
      'shared',
    )
    expect(sharedVerifierNetwork('proxy-only')).toBe('none')
    expect(sharedVerifierNetwork('public')).toBe('public')
  })
})
