import { declaredRoutes, type Manifest } from '../manifest/schema.js'
import { openRunTelemetry, type RunTelemetry, type RunTelemetryOptions } from './telemetry-setup.js'

/** The measurement planes of a run, one per model route its cells drive. */
export interface RoutedTelemetry {
  /** The telemetry of the route `cellId` drives. */
  forCell(cellId: string): RunTelemetry
  /** One phrase per route (for logs). */
  description: string
  /** The proxies' journal files (one per route). */
  journals: string[]
  close(): Promise<void>
}

/**
 * Open one capture per model route the manifest's cells drive (a one-model experiment: one capture,
 * as before), so each cell's requests reach its own route's upstream. The journal of a named route is
 * `<journal>.<name>.jsonl`. A route that cannot open closes the ones already open.
 */
export async function openRoutedTelemetry(
  opts: Omit<RunTelemetryOptions, 'route'>,
): Promise<RoutedTelemetry> {
  const m: Manifest = opts.manifest
  const used = declaredRoutes(m).filter((r) => m.cells.some((c) => (c.model ?? null) === r.name))
  const byRoute = new Map<string | null, RunTelemetry>()
  const journals: string[] = []
  try {
    for (const r of used) {
      const journalFile =
        used.length === 1
          ? opts.journalFile
          : opts.journalFile.replace(/(\.jsonl)?$/, `.${r.name ?? 'model'}.jsonl`)
      journals.push(journalFile)
      byRoute.set(
        r.name,
        await openRunTelemetry({ ...opts, journalFile, route: { route: r.route, where: r.path.join('.') } }),
      )
    }
  } catch (e) {
    for (const t of byRoute.values()) await t.close()
    throw e
  }
  return {
    forCell(cellId) {
      const cell = m.cells.find((c) => c.id === cellId)
      const t = byRoute.get(cell?.model ?? null) ?? [...byRoute.values()][0]
      if (!t) throw new Error(`no telemetry for cell ${cellId}`)
      return t
    },
    description: used
      .map((r) => `${r.name === null ? '' : `${r.name}: `}${byRoute.get(r.name)?.description ?? ''}`)
      .join('; '),
    journals,
    async close() {
      for (const t of byRoute.values()) await t.close()
    },
  }
}
