import { type Manifest, type ModelRoute, primaryRoute } from '../manifest/schema.js'
import { type ScriptedModel, startScriptedModel } from '../model/server.js'
import type { TelemetryCapture } from '../telemetry/capture.js'
import { openLedgerCapture } from '../telemetry/ledger-capture.js'
import { openLiteLLMCapture } from '../telemetry/litellm/capture.js'
import { HwError } from '../util/errors.js'

/** The measurement plane of a run: one capture (and the scripted model when the route is scripted). */
export interface RunTelemetry {
  capture: TelemetryCapture
  /** The in-process scripted model, when the route's provider is `scripted`. */
  model: ScriptedModel | null
  /**
   * Where the capture forwards requests (for logs): the upstream URL, or `LiteLLM at <url>` with
   * source litellm (the recording proxy forwards there and the spend logs are read from there).
   */
  upstream: string
  /**
   * The whole measurement plane in one phrase (for logs), e.g. `recording proxy → http://127.0.0.1:8080
   * (scripted model)` or `LiteLLM spend logs at http://litellm:4000 (recording proxy in front)`.
   */
  description: string
  /** Stop the capture, then the model. */
  close(): Promise<void>
}

export interface RunTelemetryOptions {
  manifest: Manifest
  /**
   * The model route the capture forwards to (a several-model experiment opens one capture per route);
   * default: the baseline cell's route. `where` names it in messages (default `model`).
   */
  route?: { route: ModelRoute; where: string }
  /** Task folder root of the panel (the scripted model follows these tasks' solutions), or null. */
  tasksDir: string | null
  runId: string
  /**
   * The recording proxy's own journal of every row (attributed or not). The leg's ledger.jsonl is
   * written by the run stage from each attempt's rows, so this file lives outside the artifact.
   */
  journalFile: string
  /** Runner environment: base_url_env and api_key_env are read from it. */
  env?: NodeJS.ProcessEnv
  /** One line per scripted-model request (debug). */
  modelLog?: (line: string) => void
}

/**
 * Open the telemetry for a run, shareable by several legs. Source `litellm`: LiteLLM spend logs
 * (per-attempt virtual keys or metadata headers, the recording proxy in front), from the proxy URL and
 * master key named by telemetry.litellm.base_url_env / master_key_env. Source `ledger`: the
 * recording proxy in-process on 127.0.0.1, forwarding to the scripted model (started here with the
 * panel's task folders and `model.scripted`, attribution forwarded so it knows the task) or to the
 * route's base URL with its API key. Throws HwError `model_route_invalid` when a named variable
 * (base_url_env, api_key_env, master_key_env) is not set.
 */
export async function openRunTelemetry(opts: RunTelemetryOptions): Promise<RunTelemetry> {
  const m = opts.manifest
  const env = opts.env ?? process.env
  if (m.telemetry.source === 'litellm') return openLiteLLM(opts, env)
  const route = opts.route?.route ?? primaryRoute(m)
  const where = opts.route?.where ?? 'model'
  let model: ScriptedModel | null = null
  let upstream: string
  let upstreamKey: string | undefined
  if (route.provider === 'scripted') {
    model = await startScriptedModel({
      panelDirs: opts.tasksDir ? [opts.tasksDir] : [],
      config: route.scripted ?? {},
      log: opts.modelLog,
    })
    upstream = model.origin
  } else {
    const fromEnv = route.base_url_env ? env[route.base_url_env] : undefined
    const base = route.base_url ?? fromEnv
    if (!base) {
      throw new HwError(
        'model_route_invalid',
        `${route.base_url_env} is not set: the model route has no base URL`,
        {
          where: `${where}.base_url_env`,
          help: `export ${route.base_url_env}=<upstream base URL>`,
        },
      )
    }
    upstream = base.replace(/\/+$/, '')
    if (route.api_key_env) {
      upstreamKey = env[route.api_key_env]
      if (!upstreamKey) {
        throw new HwError(
          'model_route_invalid',
          `${route.api_key_env} is not set: the model route has no API key`,
          {
            where: `${where}.api_key_env`,
            help: `export ${route.api_key_env}=<key> (harnesses never see it: the proxy swaps it in)`,
          },
        )
      }
    }
  }
  let capture: TelemetryCapture
  try {
    capture = await openLedgerCapture({
      route,
      upstreamOrigin: upstream,
      upstreamKey,
      ledgerFile: opts.journalFile,
      runId: opts.runId,
      experimentId: m.experiment.id,
      forwardAttribution: model !== null,
    })
  } catch (e) {
    await model?.close()
    throw e
  }
  return {
    capture,
    model,
    upstream,
    description: `recording proxy → ${upstream}${model ? ' (scripted model)' : ''}`,
    async close() {
      await capture.close()
      await model?.close()
    },
  }
}

async function openLiteLLM(opts: RunTelemetryOptions, env: NodeJS.ProcessEnv): Promise<RunTelemetry> {
  const m = opts.manifest
  const settings = m.telemetry.litellm
  if (!settings) {
    throw new HwError('model_route_invalid', 'telemetry source "litellm" needs a telemetry.litellm block', {
      where: 'telemetry.litellm',
    })
  }
  const need = (name: string, what: string): string => {
    const v = env[name]
    if (!v) {
      throw new HwError('model_route_invalid', `${name} is not set: no ${what} for LiteLLM telemetry`, {
        where: 'telemetry.litellm',
        help: `export ${name}=<${what}>`,
      })
    }
    return v
  }
  const baseUrl = need(settings.base_url_env, 'LiteLLM proxy URL').replace(/\/+$/, '')
  const capture = await openLiteLLMCapture({
    baseUrl,
    masterKey: need(settings.master_key_env, 'LiteLLM master key'),
    settings,
    route: opts.route?.route ?? primaryRoute(m),
    runId: opts.runId,
    experimentId: m.experiment.id,
    ledgerFile: opts.journalFile,
  })
  return {
    capture,
    model: null,
    upstream: `LiteLLM at ${baseUrl}`,
    description: `LiteLLM spend logs at ${baseUrl} (recording proxy in front)`,
    close: () => capture.close(),
  }
}
