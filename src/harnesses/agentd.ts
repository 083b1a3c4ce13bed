import { access, constants } from 'node:fs/promises'
import path from 'node:path'
import { HwError } from '../util/errors.js'
import type { AttemptContext, HarnessAdapter, InstalledHarness, ParsedRun, RawRun } from './contract.js'
import { attemptEnv } from './env.js'
import { writeCellFiles } from './files.js'
import { installDir } from './install.js'
import { dig, num, parseJsonLines, str } from './jsonl.js'
import { probeCliVersion } from './probe.js'
import { startupFailure } from './startup.js'
import { openaiBaseUrl } from './urls.js'

/** agentd's documented exit code for a run stopped by its own budget. */
export const AGENTD_BUDGET_EXIT = 7

/** The JSON-lines telemetry event that closes a run and carries its usage. */
export const AGENTD_FINAL_EVENT = 'loop.final'

/**
 * Where an agentd release binary is expected: `<cache>/agentd@<version>/bin/agentd`. agentd is not
 * published on npm or PyPI, so the binary of the pinned release is placed there (by a workflow step or
 * by hand) and install only checks it.
 */
export function agentdBinary(cacheDir: string, version: string): string {
  return path.join(installDir(cacheDir, 'agentd', version), 'bin', 'agentd')
}

/** The headless command line: `agentd once --instruction <prompt> --intelligence <model> [cell args]`. */
export function agentdArgs(ctx: Pick<AttemptContext, 'prompt' | 'model' | 'config'>): string[] {
  return ['once', '--instruction', ctx.prompt, '--intelligence', ctx.model, ...ctx.config.args]
}

/**
 * agentd, the RFC's own harness, in `once` mode (issue 15 §7): the prompt as `--instruction`, the model
 * as `--intelligence`, the OpenAI-compatible route in OPENAI_BASE_URL / OPENAI_API_KEY, MCP servers with
 * `--mcp <file>` (added by the bridge recipe), JSON-lines telemetry on stderr whose `loop.final` event
 * holds the run's usage, exit 7 when its own budget stopped it.
 */
export const agentdAdapter: HarnessAdapter = {
  name: 'agentd',

  /** Checks the pinned binary is in the cache; throws HwError `install_failed` saying where it goes. */
  async install(version, ctx): Promise<InstalledHarness> {
    const bin = agentdBinary(ctx.cacheDir, version)
    try {
      await access(bin, constants.X_OK)
    } catch {
      throw new HwError('install_failed', `agentd ${version} is not in the harness cache`, {
        where: bin,
        help: `agentd is not on npm or PyPI: put the agentd ${version} release binary (executable) at that path`,
      })
    }
    return { harness: 'agentd', version, bin, root: path.dirname(path.dirname(bin)) }
  },

  probeVersion: (installed, sandbox) =>
    probeCliVersion(installed.bin, [], {}, undefined, { sandbox, readOnly: [installed.root] }),

  async prepare(installed, ctx) {
    await writeCellFiles(ctx.home, ctx.config.files)
    const env = attemptEnv(ctx, {
      OPENAI_BASE_URL: openaiBaseUrl(ctx.endpoint.origin),
      OPENAI_API_KEY: ctx.endpoint.apiKey,
      AGENTD_HOME: path.join(ctx.home, '.agentd'),
    })
    return { command: installed.bin, args: agentdArgs(ctx), env, cwd: ctx.workspace }
  },

  async parse(run: RawRun): Promise<ParsedRun> {
    return parseAgentdRun(run)
  },
}

/** The event name of a telemetry line (`event`, `type` or `name`). */
function eventName(e: Record<string, unknown>): string | null {
  return str(e.event) ?? str(e.type) ?? str(e.name)
}

/**
 * A finished `agentd once` run: telemetry from stderr (non-JSON lines are ignored, as are events of
 * other kinds), the usage of the last `loop.final` (`input_tokens`/`prompt_tokens`,
 * `output_tokens`/`completion_tokens`, `cache_read_tokens`/`cached_tokens`, `cache_write_tokens`,
 * `requests`, `turns`, `cost_usd`), the answer from its `answer`/`output`/`text`, else stdout. Exit 7
 * is a budget stop, never a startup failure. Pure.
 */
export function parseAgentdRun(run: RawRun): ParsedRun {
  const { events } = parseJsonLines(run.stderr)
  const final = [...events].reverse().find((e) => eventName(e) === AGENTD_FINAL_EVENT)
  const usage = dig(final, 'usage') ?? final
  const pick = (...keys: string[]): number | null => {
    for (const k of keys) {
      const v = num(dig(usage, k))
      if (v !== null) return v
    }
    return null
  }
  const selfReport = final
    ? {
        input_tokens: pick('input_tokens', 'prompt_tokens'),
        output_tokens: pick('output_tokens', 'completion_tokens'),
        cache_read_tokens: pick('cache_read_tokens', 'cached_tokens'),
        cache_write_tokens: pick('cache_write_tokens'),
        cost_usd: pick('cost_usd'),
        requests: pick('requests', 'api_calls'),
        turns: pick('turns', 'iterations'),
      }
    : null
  const said = final
    ? (str(dig(final, 'answer')) ?? str(dig(final, 'output')) ?? str(dig(final, 'text')))
    : null
  const answer = (said ?? run.stdout).trim()
  const budgetStop =
    run.exitCode === AGENTD_BUDGET_EXIT ? `agentd budget stop (exit ${AGENTD_BUDGET_EXIT})` : null
  const errors = events
    .filter((e) => /error/i.test(eventName(e) ?? '') || str(dig(e, 'level')) === 'error')
    .map((e) => str(dig(e, 'message')) ?? str(dig(e, 'error')) ?? 'error')
  const usedModel = (selfReport?.input_tokens ?? 0) > 0
  return {
    finalMessage: answer === '' || (run.exitCode !== 0 && !budgetStop) ? null : answer,
    trajectory: events,
    selfReport,
    startupError: usedModel || budgetStop ? null : startupFailure(run, errors),
    budgetStop,
  }
}
