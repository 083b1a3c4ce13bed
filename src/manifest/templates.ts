/**
 * Which placeholders each command template of a manifest may use. Values are shell-quoted on expansion
 * (src/util/template.ts); a template naming anything else is rejected when the manifest is validated.
 *
 * `benchmark.setup` and `benchmark.verifier.command` (id-list panels such as SWE-bench):
 * instance: the instance id · workspace: the attempt's workspace folder · patch: file holding the
 * attempt's diff · predictions: SWE-bench predictions JSONL holding that diff · out: a private folder
 * (setup writes the prompt to {out}/instruction.md; graders write reports there) · run_id: the run's id.
 */
export const ID_LIST_PLACEHOLDERS = [
  'instance',
  'workspace',
  'patch',
  'predictions',
  'out',
  'run_id',
] as const
export type IdListPlaceholder = (typeof ID_LIST_PLACEHOLDERS)[number]

/**
 * `cells[].config.command` (harness `command`): prompt: the task prompt · prompt_file: a file holding it ·
 * workspace · base_url: the endpoint origin · openai_base_url: origin + /v1 · model · api_key: the
 * per-attempt key.
 */
export const COMMAND_PLACEHOLDERS = [
  'prompt',
  'prompt_file',
  'workspace',
  'base_url',
  'openai_base_url',
  'model',
  'api_key',
] as const
export type CommandPlaceholder = (typeof COMMAND_PLACEHOLDERS)[number]
