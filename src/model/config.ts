import { readFile } from 'node:fs/promises'
import { parse as parseYaml } from 'yaml'
import { fieldPath } from '../manifest/load.js'
import { ScriptedModelSchema } from '../manifest/schema.js'
import { HwError } from '../util/errors.js'
import type { ScriptedSettings } from './types.js'

/** Settings in force for one task: the manifest's, with the task's overrides applied. */
export interface TaskSettings {
  successRate: number
  latencyMs: number
  faults: ScriptedSettings['faults']
}

/**
 * Validate scripted-model settings (`model.scripted` of a manifest) and fill defaults. Throws HwError
 * `config_invalid` with one detail per problem (`field.path: message`); `where` names the source.
 */
export function resolveSettings(input: unknown, where = 'scripted model settings'): ScriptedSettings {
  const r = ScriptedModelSchema.safeParse(input ?? {})
  if (r.success) return r.data
  throw new HwError('config_invalid', 'invalid scripted model settings', {
    where,
    details: r.error.issues.map((i) => `${fieldPath(i.path) || '(top level)'}: ${i.message}`),
    help: 'fields: seed, success_rate, latency_ms, faults {rate_429, rate_500, hang_rate}, caching, tasks',
  })
}

/** The settings for `taskId` (null = a request of no known task: the global settings). */
export function taskSettings(s: ScriptedSettings, taskId: string | null): TaskSettings {
  const o = taskId === null ? undefined : s.tasks[taskId]
  return {
    successRate: o?.success_rate ?? s.success_rate,
    latencyMs: o?.latency_ms ?? s.latency_ms,
    faults: { ...s.faults, ...(o?.faults ?? {}) },
  }
}

/**
 * Read settings from a JSON or YAML file holding either the settings object itself, `{scripted: …}`,
 * or a whole manifest (`model.scripted` is used). Throws HwError `config_unreadable` / `config_invalid`.
 */
export async function loadSettingsFile(file: string): Promise<ScriptedSettings> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    throw new HwError('config_unreadable', `cannot read (${(e as NodeJS.ErrnoException).code})`, {
      where: file,
      help: 'pass a JSON or YAML file with the scripted model settings',
    })
  }
  let value: unknown
  try {
    value = parseYaml(text)
  } catch (e) {
    throw new HwError('config_invalid', `not valid YAML/JSON: ${(e as Error).message.split('\n')[0]}`, {
      where: file,
    })
  }
  const o = (value ?? {}) as Record<string, unknown>
  const model = o.model as Record<string, unknown> | undefined
  const picked = o.scripted ?? (model && typeof model === 'object' ? (model.scripted ?? {}) : o)
  return resolveSettings(picked, file)
}
