import { z } from 'zod'
import { ManifestSchema } from './schema.js'

/**
 * JSON Schema (draft 2020-12) of the manifest's input form, generated from the zod schema with
 * zod's own `z.toJSONSchema`, so editors can autocomplete and check manifests.
 */
export function manifestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ManifestSchema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >
  return {
    $schema: schema.$schema,
    $id: 'https://github.com/harness-watch/harness-watch/manifests/schema.json',
    title: 'Harness Watch experiment manifest',
    ...schema,
  }
}
