import { z } from 'zod'

export const CAPABILITIES_SCHEMA_VERSION = 1
/** The capability manifest's file name in an attempt's logs folder. */
export const CAPABILITIES_FILE = 'capabilities.json'

/**
 * One capability as an adapter read it: `value` null means unknown (the adapter cannot read it, or
 * the file that would say is absent or unreadable) — never a guess; `from` says where the value was
 * read, or why it is unknown.
 */
const fact = <T extends z.ZodTypeAny>(value: T) =>
  z.strictObject({ value: value.nullable(), from: z.string().max(500) })

const Names = z.array(z.string().max(200)).max(1000)

/** What a harness's own configuration (files it reads, its arguments and environment) says it can do. */
export const ConfiguredCapabilitiesSchema = z.strictObject({
  tools: fact(Names).describe('tools the configuration enables or restricts to (by name)'),
  disabled_tools: fact(Names).describe('tools the configuration turns off (by name)'),
  skills: fact(Names),
  mcp_servers: fact(Names),
  compaction: fact(z.boolean()).describe('context compaction or condensation on/off'),
  retry: fact(z.string().max(200)).describe("the harness's own retry policy"),
  permission_mode: fact(z.string().max(200)),
  iteration_limit: fact(z.union([z.number().int().positive(), z.literal('unlimited')])),
  browser: fact(z.boolean()),
  request_routes: fact(Names).describe('wire APIs the harness is pointed at'),
})
export type ConfiguredCapabilities = z.infer<typeof ConfiguredCapabilitiesSchema>
export type CapabilityName = keyof ConfiguredCapabilities
export const CAPABILITY_NAMES = Object.keys(ConfiguredCapabilitiesSchema.shape) as CapabilityName[]

/** A tool the proxy saw offered, with every schema hash it was offered under. */
export const SeenToolSchema = z.strictObject({
  name: z.string().max(200),
  schema_sha256: z.array(z.string().max(16).nullable()).max(64),
  requests: z.number().int().nonnegative(),
})

/** What the proxy saw the harness offer the model (names and hashes only). */
export const ObservedCapabilitiesSchema = z.strictObject({
  requests: z.number().int().nonnegative().describe("the harness's own proxy requests of the attempt"),
  requests_with_tools: z.number().int().nonnegative(),
  tools_named: z
    .boolean()
    .describe(
      'every request named the tools it offered (false: some did not, so the tool list is not the whole)',
    ),
  tools: z.array(SeenToolSchema).max(2000),
  call_types: Names.describe('request routes seen (call types), e.g. chat.completions, messages'),
})
export type ObservedCapabilities = z.infer<typeof ObservedCapabilitiesSchema>

/** capabilities.json: one attempt's capability manifest, written with the attempt. */
export const CapabilityManifestSchema = z.strictObject({
  schema_version: z.literal(CAPABILITIES_SCHEMA_VERSION),
  cell_id: z.string().max(200),
  harness: z.string().max(100),
  harness_version: z.string().max(200).nullable(),
  model: z.string().max(300),
  configured: ConfiguredCapabilitiesSchema,
  observed: ObservedCapabilitiesSchema.nullable().describe('null when no proxy request was recorded'),
})
export type CapabilityManifest = z.infer<typeof CapabilityManifestSchema>

/** One cell's capabilities over its attempts, as the comparison carries them. */
export const CellCapabilitiesSchema = z.strictObject({
  cell_id: z.string(),
  harness: z.string(),
  harness_version: z.string().nullable(),
  attempts: z.number().int().nonnegative().describe('attempts whose capabilities.json was read'),
  configured: ConfiguredCapabilitiesSchema,
  observed: ObservedCapabilitiesSchema.nullable(),
})
export type CellCapabilities = z.infer<typeof CellCapabilitiesSchema>

/** The comparison's capability section: each cell's capabilities, and the differences in one line each. */
export const CapabilitiesSectionSchema = z.strictObject({
  cells: z.array(CellCapabilitiesSchema),
  differences: z.array(z.string()).describe('each cell against the baseline cell'),
  since_previous: z
    .array(z.string())
    .optional()
    .describe(
      "each cell against the same cell in the previous run's comparison (set where the report is written with one)",
    ),
  notes: z.array(z.string()).describe('capabilities.json files that were absent, unreadable or forged'),
})
export type CapabilitiesSection = z.infer<typeof CapabilitiesSectionSchema>
