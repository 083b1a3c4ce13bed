import type { Command } from 'commander'
import { loadManifest } from '../../manifest/load.js'
import { primaryRoute } from '../../manifest/schema.js'
import { loadSettingsFile } from '../../model/config.js'
import { startScriptedModel } from '../../model/server.js'
import type { ScriptedSettings } from '../../model/types.js'
import { resolvePanel } from '../../panel/resolve.js'
import { HwError } from '../../util/errors.js'

interface ServeOptions {
  port: string
  panel: string[]
  config?: string
  manifest?: string
}

/** `harness-watch model serve`: run the scripted model in the foreground until SIGINT/SIGTERM. */
export function registerModel(program: Command): void {
  const model = program.command('model').description('The scripted model server used offline and in tests')
  model
    .command('serve')
    .description('Serve the scripted model on 127.0.0.1; prints "listening on <origin>" once ready')
    .option('--port <n>', 'TCP port (0 = any free port)', '0')
    .option('--panel <dir>', 'panel folder or task folder to follow (repeatable)', collect, [])
    .option('--config <file>', 'scripted model settings (JSON or YAML; overrides the manifest)')
    .option('--manifest <file>', 'take settings (model.scripted) and the task panel from a manifest')
    .action(async (opts: ServeOptions) => {
      const port = Number(opts.port)
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new HwError('bad_option', `--port must be an integer from 0 to 65535, got "${opts.port}"`)
      }
      let config: ScriptedSettings | undefined
      const panelDirs = [...opts.panel]
      if (opts.manifest) {
        const loaded = await loadManifest(opts.manifest)
        config = primaryRoute(loaded.manifest).scripted
        const panel = await resolvePanel(loaded.manifest, loaded.dir, opts.manifest)
        if (panel.tasksDir) panelDirs.push(panel.tasksDir)
      }
      if (opts.config) config = await loadSettingsFile(opts.config)
      const server = await startScriptedModel({
        port,
        panelDirs,
        config,
        log: (line) => process.stderr.write(`${line}\n`),
      })
      process.stdout.write(`listening on ${server.origin}\n`)
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop)
          process.off('SIGTERM', stop)
          server.close().then(resolve, resolve)
        }
        process.on('SIGINT', stop)
        process.on('SIGTERM', stop)
      })
    })
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value]
}
