import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { type CallLog, callRow, type TraceLog } from './calls.js'
import type { ToolOutcome, ToolProvider, ToolSpec } from './provider.js'

/** A property Gemini CLI adds to every tool and forwards when set (rig.md §2.3); dropped unless declared. */
const INJECTED = ['wait_for_previous']

/**
 * Everything between the transport and a provider: unknown tools and arguments that fail the tool's
 * JSON Schema are answered `invalid_arguments` without reaching the provider; calls run one at a time
 * (the world is one store); a provider that throws gives an `error` outcome (code `internal`), never a
 * crash; every call is logged when a log is given.
 */
export class Dispatcher {
  private readonly validators = new Map<string, JsonSchemaValidator<unknown>>()
  private readonly specs: Map<string, ToolSpec>
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly provider: ToolProvider,
    private readonly log: CallLog | null = null,
    private readonly trace: TraceLog | null = null,
  ) {
    this.specs = new Map(provider.tools().map((t) => [t.name, t]))
    const ajv = new AjvJsonSchemaValidator()
    for (const t of this.specs.values()) this.validators.set(t.name, ajv.getValidator(t.inputSchema as never))
  }

  list(): ToolSpec[] {
    return [...this.specs.values()]
  }

  /** `argumentsText`: the arguments as the JSON text received, kept in the trace for grading. */
  call(name: string, rawArgs: unknown, argumentsText?: string): Promise<ToolOutcome> {
    const run = this.queue.then(() => this.callNow(name, rawArgs, argumentsText))
    this.queue = run.catch(() => undefined)
    return run
  }

  private async callNow(name: string, rawArgs: unknown, argumentsText?: string): Promise<ToolOutcome> {
    const start = performance.now()
    const outcome = await this.outcome(name, rawArgs)
    this.log?.append(callRow(name, rawArgs, outcome.status, outcome.code, performance.now() - start))
    this.trace?.append({
      tool: name,
      arguments: rawArgs ?? null,
      ...(argumentsText !== undefined ? { arguments_text: argumentsText } : {}),
      status: outcome.status,
      ...(outcome.code ? { code: outcome.code } : {}),
    })
    return outcome
  }

  private async outcome(name: string, rawArgs: unknown): Promise<ToolOutcome> {
    const spec = this.specs.get(name)
    const validate = this.validators.get(name)
    if (!spec || !validate) {
      return { status: 'invalid_arguments', code: 'unknown_tool', text: `unknown tool "${name}"` }
    }
    const args = stripInjected(rawArgs ?? {}, spec)
    const v = this.provider.validateArguments === false ? null : validate(args)
    if (v && !v.valid) {
      return {
        status: 'invalid_arguments',
        code: 'invalid_arguments',
        text: `invalid arguments: ${v.errorMessage}`,
      }
    }
    try {
      return await this.provider.call(name, args)
    } catch (e) {
      return {
        status: 'error',
        code: 'internal',
        text: `the tool failed: ${(e as Error).message ?? String(e)}`,
      }
    }
  }
}

function stripInjected(args: unknown, spec: ToolSpec): unknown {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return args
  const props = (spec.inputSchema.properties ?? {}) as Record<string, unknown>
  const drop = INJECTED.filter((k) => k in (args as object) && !Object.hasOwn(props, k))
  if (drop.length === 0) return args
  return Object.fromEntries(Object.entries(args).filter(([k]) => !drop.includes(k)))
}
