import path from 'node:path'
import { analystNext } from './analyst-script.js'
import { findBridgeTool, unwrapToolResult } from './calls.js'
import { findReadTool, findShellTool, readArgs, shellArgs, valueFromSchema } from './tools.js'
import type { Action, ParsedRequest, TaskScript } from './types.js'

/** What the script knows besides the request itself. */
export interface ScriptContext {
  /** The task the request belongs to, or null when none was recognised. */
  task: TaskScript | null
  /** The seeded draw for this (task, cell, trial): follow the reference solution or not. */
  success: boolean
  /** Working directory the harness announced in its prompt, or null. */
  workdir: string | null
  /** Extra inspections of the same file (an injected change: `model.scripted.cells.<id>.repeat_reads`). */
  repeatReads?: number
}

type Step = 'inspect' | 'solve' | 'test'

/**
 * The scripted model's decision for one request (pure, stateless: the step is the number of tool
 * results already in the conversation).
 * - No tools (title/summary calls): a short title, or an object built from the requested JSON schema.
 * - Known task, success draw: inspect → apply solution/solve.sh through the shell (quoted heredoc) →
 *   run the task's test command → a short final answer. Failure draw: inspect → tests → final answer.
 *   An error in the previous tool result does not change the plan.
 * - Unknown task with a shell tool: one `ls`, then a short reply.
 * - The analyst's request (the dossier tools offered): the analyst script (`decideAnalyst`).
 */
export function decide(req: ParsedRequest, ctx: ScriptContext): Action {
  const title = titleFor(ctx.task)
  if (req.tools.length === 0) {
    if (req.jsonSchema) {
      return { kind: 'text', step: 'json', text: JSON.stringify(valueFromSchema(req.jsonSchema, title)) }
    }
    return { kind: 'text', step: 'title', text: title }
  }
  if (isAnalystRequest(req)) return decideAnalyst(req)
  if (ctx.task?.calls) return decideBridge(req, ctx.task, ctx.success)
  const shell = findShellTool(req.tools)
  const read = findReadTool(req.tools)
  if (!ctx.task) {
    if (shell && req.toolResults === 0) {
      return { kind: 'tool', step: 'explore', tool: shell, args: shellArgs(shell, 'ls', 'List files') }
    }
    return { kind: 'text', step: 'reply', text: 'Done.' }
  }
  const task = ctx.task
  const steps = planFor(task, ctx.success, shell !== null, read !== null, ctx.repeatReads)
  const step = steps[req.toolResults]
  if (step === undefined) return { kind: 'text', step: 'final', text: finalText(task, ctx.success) }
  if (step === 'inspect') {
    const file = task.inspectFile
    // A read tool wants a path the harness can resolve: absolute when the workdir is known.
    if (read && file && (ctx.workdir || !shell)) {
      const target = ctx.workdir ? path.posix.join(ctx.workdir, file) : file
      return { kind: 'tool', step, tool: read, args: readArgs(read, target, `Read ${file}`) }
    }
    if (shell) {
      const cmd = file ? `ls -la && cat -- ${shellQuote(file)}` : 'ls -la'
      return { kind: 'tool', step, tool: shell, args: shellArgs(shell, cmd, 'Inspect the workspace') }
    }
  }
  if (shell && step === 'solve' && task.solve !== null) {
    return {
      kind: 'tool',
      step,
      tool: shell,
      args: shellArgs(shell, solveCommand(task.solve), 'Apply the fix'),
    }
  }
  if (shell && step === 'test' && task.testCommand !== null) {
    return { kind: 'tool', step, tool: shell, args: shellArgs(shell, task.testCommand, 'Run the tests') }
  }
  return { kind: 'text', step: 'final', text: finalText(task, ctx.success) }
}

/**
 * A bridge task: the reference calls of solution/calls.json, one per response, each to the bridge tool
 * under the harness's own naming (calls.ts `findBridgeTool`), then the answer. A failure draw stops
 * one call short (no call at all for a one-call task). A call whose tool is not offered ends the
 * attempt with an answer saying so: a harness that did not load the bridge fails visibly.
 */
export function decideBridge(req: ParsedRequest, task: TaskScript, success: boolean): Action {
  const all = task.calls ?? []
  const calls = success ? all : all.slice(0, -1)
  const call = calls[req.toolResults]
  if (call === undefined) {
    if (!success) return { kind: 'text', step: 'final', text: 'I could not complete the request.' }
    const last = unwrapToolResult(req.lastToolResult ?? '')
    const text = task.answer?.trim() || (last === '' ? 'Done.' : `Done. ${last.slice(0, 500)}`)
    return { kind: 'text', step: 'final', text }
  }
  const tool = findBridgeTool(req.tools, call.tool)
  if (!tool) {
    return {
      kind: 'text',
      step: 'final',
      text: `I cannot do this: the tool ${call.tool} is not among the tools I was given.`,
    }
  }
  return { kind: 'tool', step: 'bridge', tool, args: call.arguments }
}

/** Whether the request is the analyst's: the dossier tools `list_pairs` and `view_request_curve` are offered. */
export function isAnalystRequest(req: ParsedRequest): boolean {
  return (
    findBridgeTool(req.tools, 'list_pairs') !== null &&
    findBridgeTool(req.tools, 'view_request_curve') !== null
  )
}

/**
 * The analyst's next response: the analyst script (analyst-script.ts) replayed over the tool results
 * already in the conversation (each unwrapped of its harness's framing), giving its next dossier tool
 * call under the harness's naming, or its answer as JSON text (the proposal schema).
 */
export function decideAnalyst(req: ParsedRequest): Action {
  const next = analystNext(req.toolResultTexts.map(unwrapToolResult))
  if ('answer' in next) return { kind: 'text', step: 'final', text: JSON.stringify(next.answer) }
  const tool = findBridgeTool(req.tools, next.call.tool)
  if (!tool) {
    return {
      kind: 'text',
      step: 'final',
      text: `I cannot do this: the tool ${next.call.tool} is not offered.`,
    }
  }
  return { kind: 'tool', step: 'bridge', tool, args: next.call.args }
}

/**
 * The tool steps of a task: only those the offered tools and the task's files make possible; the
 * inspection is repeated `repeatReads` more times when a change injected into the cell asks for it.
 */
export function planFor(
  task: TaskScript,
  success: boolean,
  hasShell: boolean,
  hasRead: boolean,
  repeatReads = 0,
): Step[] {
  const steps: Step[] = []
  if (hasShell || (hasRead && task.inspectFile)) {
    for (let i = 0; i <= repeatReads; i++) steps.push('inspect')
  }
  if (hasShell && success && task.solve !== null) steps.push('solve')
  if (hasShell && task.testCommand !== null) steps.push('test')
  return steps
}

/**
 * solve.sh run as a quoted heredoc (`bash <<'HW_SOLVE' … HW_SOLVE`): no expansion happens in the text,
 * and the delimiter is changed if the script itself holds a line equal to it.
 */
export function solveCommand(solve: string): string {
  const lines = new Set(solve.split(/\r?\n/))
  let delim = 'HW_SOLVE'
  for (let i = 1; lines.has(delim); i++) delim = `HW_SOLVE_${i}`
  const body = solve.endsWith('\n') ? solve : `${solve}\n`
  return `bash <<'${delim}'\n${body}${delim}`
}

function finalText(task: TaskScript, success: boolean): string {
  const tests = task.testCommand ? ` and ran \`${task.testCommand}\`` : ''
  return success
    ? `Done: I applied the fix${tests}.`
    : `I looked into it${tests}, but I could not find a fix; the task is not solved.`
}

/** A short title: the instruction's first line (Markdown heading marks removed), at most 60 characters. */
export function titleFor(task: TaskScript | null): string {
  if (!task) return 'Scripted session'
  const first = task.instruction.split('\n').find((l) => l.trim() !== '') ?? task.id
  const clean = first.replace(/^#+\s*/, '').trim()
  return clean.length > 60 ? `${clean.slice(0, 57)}...` : clean
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/**
 * The working directory a harness announces in its prompt ("Current working directory: /w",
 * "Working directory: /w", "Primary working directory: /w", Codex `<cwd>/w</cwd>`, Gemini CLI's
 * "Workspace Directories:" list), or null.
 */
export function findWorkdir(text: string): string | null {
  const tag = /<cwd>\s*(\/[^<\s]+)\s*<\/cwd>/i.exec(text)
  if (tag?.[1]) return tag[1]
  // Gemini CLI: "- **Workspace Directories:**\n  - /w/abc"
  const list = /Workspace Directories:\**\s*\n\s*-\s*(\/[^\s`'"<>]+)/i.exec(text)
  if (list?.[1]) return list[1]
  const m =
    /(?:working directory|current directory|cwd|working in the directory)\s*(?:is)?\s*[:=]?\s*[`'"]?(\/[^\s`'"<>]+)/i.exec(
      text,
    )
  return m?.[1] ? m[1].replace(/[.,;:)]+$/, '') : null
}
