import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { COMMAND_PLACEHOLDERS, type CommandPlaceholder } from '../manifest/templates.js'
import type { SelfReport } from '../records/attempt.js'
import { HwError } from '../util/errors.js'
import { expandTemplate, shellQuote } from '../util/template.js'
import type {
  AttemptContext,
  HarnessAdapter,
  InstalledHarness,
  Invocation,
  ParsedRun,
  RawRun,
} from './contract.js'
import { attemptEnv } from './env.js'
import { writeCellFiles } from './files.js'
import { parseJsonLines } from './jsonl.js'
import { openaiBaseUrl } from './urls.js'

export { COMMAND_PLACEHOLDERS, type CommandPlaceholder } from '../manifest/templates.js'

/**
 * Fill a command template: every `{name}` from COMMAND_PLACEHOLDERS becomes its value, shell-quoted
 * (so a prompt with quotes, `$` or newlines stays one word); `${VAR}` and JSON braces are left alone.
 * Throws HwError `template_invalid` for an unknown placeholder or one written inside quotes.
 */
export function renderCommandTemplate(template: string, values: Record<CommandPlaceholder, string>): string {
  return expandTemplate(template, values, COMMAND_PLACEHOLDERS, 'cells[].config.command')
}

/**
 * The generic adapter (`harness: command`): any program, from the cell's `config.command` template,
 * run as `bash -lc <script>` in the workspace with the isolated environment. The endpoint is also in
 * the environment (HW_BASE_URL, HW_OPENAI_BASE_URL, HW_MODEL, HW_API_KEY, HW_PROMPT_FILE and the usual
 * OPENAI_/ANTHROPIC_ variables) for programs that read it there. A program may state its own usage
 * as a `{"type":"self_report",…}` JSON line on stdout (see commandSelfReport).
 */
export const commandAdapter: HarnessAdapter = {
  name: 'command',

  /** Nothing to install: the template names its own program. The declared version is its label. */
  async install(version, ctx) {
    return { harness: 'command', version, bin: 'bash', root: ctx.cacheDir }
  },

  /**
   * A command template has no version of its own to ask for; the declared version labels it and the
   * cell's config hash covers the template itself, so the declared version is what is observed.
   */
  async probeVersion(installed: InstalledHarness) {
    return installed.version
  },

  async prepare(_installed, ctx: AttemptContext): Promise<Invocation> {
    const template = ctx.config.command
    if (!template || template.trim() === '') {
      throw new HwError('bad_config', 'harness "command" needs config.command (a command template)', {
        where: 'cells[].config.command',
        help: 'e.g. command: "my-agent --model {model} --base-url {openai_base_url} {prompt}"',
      })
    }
    await writeCellFiles(ctx.home, ctx.config.files)
    const promptFile = path.join(ctx.tmp, 'prompt.md')
    await writeFile(promptFile, ctx.prompt)
    const values: Record<CommandPlaceholder, string> = {
      prompt: ctx.prompt,
      prompt_file: promptFile,
      workspace: ctx.workspace,
      base_url: ctx.endpoint.origin,
      openai_base_url: openaiBaseUrl(ctx.endpoint.origin),
      model: ctx.model,
      api_key: ctx.endpoint.apiKey,
    }
    const env = attemptEnv(ctx, {
      HW_BASE_URL: values.base_url,
      HW_OPENAI_BASE_URL: values.openai_base_url,
      HW_MODEL: ctx.model,
      HW_API_KEY: ctx.endpoint.apiKey,
      HW_PROMPT_FILE: promptFile,
      HW_WORKSPACE: ctx.workspace,
      OPENAI_BASE_URL: values.openai_base_url,
      OPENAI_API_KEY: ctx.endpoint.apiKey,
      ANTHROPIC_BASE_URL: values.base_url,
      ANTHROPIC_API_KEY: ctx.endpoint.apiKey,
    })
    const rendered = [renderCommandTemplate(template, values), ...ctx.config.args.map(shellQuote)].join(' ')
    // A login shell re-reads /etc/profile, which resets PATH on common distributions: restore ours.
    const script = `export PATH=${shellQuote(env.PATH ?? '')}\n${rendered}`
    return { command: 'bash', args: ['-lc', script], env, cwd: ctx.workspace }
  },

  async parse(run: RawRun): Promise<ParsedRun> {
    const { events } = parseJsonLines(run.stdout)
    const lines = run.stdout
      .trim()
      .split(/\r?\n/)
      .filter((l) => l.trim() !== '')
    const last = lines.at(-1)?.trim() ?? null
    let startupError: string | null = null
    if (run.exitCode === 126 || run.exitCode === 127) {
      const why = run.stderr.trim().split(/\r?\n/).at(-1) ?? ''
      startupError = `command template could not start (exit ${run.exitCode}): ${why}`.trim()
    }
    return { finalMessage: last, trajectory: events, selfReport: commandSelfReport(events), startupError }
  },
}

const SELF_REPORT_FIELDS = [
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_usd',
  'requests',
  'turns',
] as const

/**
 * A command's own usage count, when it prints one as a JSON line on stdout:
 * `{"type":"self_report","requests":6,"input_tokens":…}` (the last such line; fields as in the
 * attempt record's `self_report`, each a non-negative number, `requests`/`turns` whole; others null).
 * A cross-check of the proxy's count only, never the measurement.
 */
export function commandSelfReport(events: readonly unknown[]): SelfReport | null {
  const line = events.findLast(
    (e): e is Record<string, unknown> =>
      typeof e === 'object' && e !== null && (e as Record<string, unknown>).type === 'self_report',
  )
  if (!line) return null
  const out = Object.fromEntries(SELF_REPORT_FIELDS.map((k) => [k, null])) as SelfReport
  let any = false
  for (const k of SELF_REPORT_FIELDS) {
    const v = line[k]
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) continue
    if ((k === 'requests' || k === 'turns') && !Number.isInteger(v)) continue
    out[k] = v
    any = true
  }
  return any ? out : null
}
