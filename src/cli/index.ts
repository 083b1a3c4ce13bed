import { readFileSync } from 'node:fs'
import path from 'node:path'
import { Command, CommanderError, Help } from 'commander'
import { stopWorker } from '../ingest/worker.js'
import { EXIT, isHwError } from '../util/errors.js'
import { packageRoot, quotePath } from '../util/paths.js'
import { printable } from '../util/text.js'
import { registerAggregate } from './commands/aggregate.js'
import { registerBridge } from './commands/bridge.js'
import { registerCalibrate } from './commands/calibrate.js'
import { registerCompare } from './commands/compare.js'
import { registerConfirm } from './commands/confirm.js'
import { registerDetect } from './commands/detect.js'
import { registerDiagnose } from './commands/diagnose.js'
import { registerDiff } from './commands/diff.js'
import { registerHistory } from './commands/history.js'
import { registerLocal } from './commands/local.js'
import { registerModel } from './commands/model.js'
import { registerPanel } from './commands/panel.js'
import { registerPlan } from './commands/plan.js'
import { registerProxy } from './commands/proxy.js'
import { registerPublish } from './commands/publish.js'
import { registerRun } from './commands/run.js'
import { registerValidate } from './commands/validate.js'

/** Build the `harness-watch` program. Each command lives in src/cli/commands/<name>.ts. */
export function buildProgram(): Command {
  const program = new Command('harness-watch')
    .description('Paired, proxy-measured comparisons of AI coding-agent harnesses on identical work.')
    .version(packageVersion(), '-V, --version', 'print the harness-watch version')
    .option('--verbose', 'show stack traces and debug output')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    // Options a command cannot run without say so in its help (subcommands inherit this).
    .configureHelp({
      optionDescription(option) {
        const text = Help.prototype.optionDescription.call(this, option)
        return option.mandatory ? `(required) ${text}` : text
      },
    })
  registerValidate(program)
  registerPlan(program)
  registerRun(program)
  registerPanel(program)
  registerModel(program)
  registerProxy(program)
  registerAggregate(program)
  registerCompare(program)
  registerDiff(program)
  registerHistory(program)
  registerDetect(program)
  registerConfirm(program)
  registerDiagnose(program)
  registerCalibrate(program)
  registerPublish(program)
  registerLocal(program)
  registerBridge(program)
  return program
}

/** The version in harness-watch's own package.json. */
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string })
      .version
  } catch {
    // The package root is not always readable (a sandboxed harness starting the bridge sees only the
    // bundle): every command still runs; only --version cannot say which release this is.
    return 'unknown'
  }
}

/**
 * Run the CLI. Returns the exit code instead of exiting so tests can call it.
 * A user mistake (HwError, or a file-system refusal the user can fix: a file where a folder is to be
 * made, no permission, a read-only file system) prints its message and exits 2; any other failure
 * prints one line and exits 1 (the stack only with --verbose).
 */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram()
  try {
    await program.parseAsync(argv, { from: 'user' })
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok
  } catch (e) {
    return failureCode(program, e)
  } finally {
    await stopWorker()
  }
}

/** Exit code and message of a failed command. */
function failureCode(program: Command, e: unknown): number {
  if (e instanceof CommanderError) {
    // --help and --version land here with exitCode 0.
    if (e.code === 'commander.unknownCommand') suggestCommand(program, e.message)
    return e.exitCode === 0 ? EXIT.ok : EXIT.usage
  }
  if (isHwError(e) && e.code === 'aborted') {
    // Interrupted (Ctrl-C / SIGTERM): the shell convention for a SIGINT exit.
    // Some aborts already read "stopped …": the word is printed once.
    process.stderr.write(printable(`stopped: ${e.message.replace(/^stopped:?\s*/, '')}\n`))
    return EXIT.interrupted
  }
  if (isHwError(e)) {
    process.stderr.write(printable(`error: ${e.format()}\n`))
    if (program.opts().verbose && e.stack) process.stderr.write(`${e.stack}\n`)
    return EXIT.usage
  }
  const fsMessage = fileSystemMessage(e)
  if (fsMessage !== null) {
    process.stderr.write(printable(`error: ${fsMessage}\n`))
    if (program.opts().verbose && (e as Error).stack) process.stderr.write(`${(e as Error).stack}\n`)
    return EXIT.usage
  }
  const err = e instanceof Error ? e : new Error(String(e))
  process.stderr.write(printable(`error: ${err.message}\n`))
  if (program.opts().verbose && err.stack) process.stderr.write(`${err.stack}\n`)
  else process.stderr.write('(run with --verbose for details)\n')
  return EXIT.failure
}

/**
 * A file-system refusal a user can fix (a file where a folder is to be made, a folder not writable, a
 * read-only file system) in words naming the path, or null for any other error.
 */
function fileSystemMessage(e: unknown): string | null {
  const err = e as NodeJS.ErrnoException
  if (!(e instanceof Error) || typeof err.code !== 'string' || typeof err.path !== 'string') return null
  const where = quotePath(err.path)
  switch (err.code) {
    case 'EEXIST':
      return err.syscall === 'mkdir'
        ? `cannot make the folder ${where}: a file of that name is in the way (give an output folder, not a file)`
        : null
    case 'ENOTDIR':
      return `cannot use ${where}: a part of that path is a file, not a folder`
    case 'EACCES':
    case 'EPERM':
      return `cannot ${err.syscall === 'mkdir' ? 'make the folder' : 'use'} ${where}: permission denied`
    case 'EROFS':
      return `cannot write ${where}: the file system is read-only`
    default:
      return null
  }
}

/**
 * After commander's `unknown command 'x'` (which suggests only close spellings): name the nearest
 * command whatever the distance, and list them all.
 */
function suggestCommand(program: Command, message: string): void {
  const typed = /unknown command '([^']*)'/.exec(message)?.[1]
  if (typed === undefined || message.includes('Did you mean')) return
  const names = program.commands.map((c) => c.name()).filter((n) => n !== 'help')
  const nearest = [...names].sort((a, b) => editDistance(typed, a) - editDistance(typed, b))[0]
  if (nearest) {
    process.stderr.write(printable(`(the nearest command is ${nearest}; commands: ${names.join(', ')})\n`))
  }
}

/** Levenshtein distance of two short strings. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (cur[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
    }
    prev = cur
  }
  return prev[b.length] ?? 0
}
