/**
 * The floors of src/, lowest first. A folder may import its own floor and any floor listed before it,
 * never one listed after it, and no file may take part in an import cycle (type-only imports count).
 * The README's "Architecture" section lists the same floors in the same order.
 */
const FLOORS = [
  'util', // errors, paths, text, number formatting: no stage
  'records', // artifact schemas every stage reads: attempt record, ledger row, comparison, scorecard
  'stats', // pure statistics, imported through stats/index.ts
  'process', // child processes with an allowlisted environment
  'manifest', // the manifest's schema, loader and harness names
  'sandbox', // isolation backends
  'bridge', // the tool-bridge: environments, effects, MCP server
  'grade', // graders of bridge tasks
  'telemetry', // proxy, ledger capture, telemetry summary
  'harnesses', // one adapter per harness CLI
  'capability', // capability manifests: what a harness's configuration and its requests say it can do
  'panel', // task folders, id lists, importers, panel verification
  'plan', // the plan and the manifest summary
  'trajectory', // per-harness trajectory mappers
  'dialogue', // turn-taking ports and the scripted user
  'model', // the deterministic model server
  'classify', // failure classes of one attempt
  'run', // legs and attempts
  'ingest', // reading artifacts and published results into the comparison's input
  'compare', // pairing, blocks, cells, the comparison
  'detect', // regression decisions and confirmation designs
  'report', // Markdown, HTML and JSON reports
  'diagnose', // dossiers, behaviour signals, the analyst
  'calibrate', // seeded simulation of the decision rules
  'pipeline', // steps that read and write files, call stages and the report writers
  'github', // comments, issues, publishing
  'action', // the GitHub Action entry
  'cli', // the command line
]

const floor = (name) => `^src/${name}/`
const upward = FLOORS.slice(0, -1).map((name, i) => ({
  name: `floor-${name}`,
  comment: `src/${name} may not import a floor above it (${FLOORS.slice(i + 1).join(', ')})`,
  severity: 'error',
  from: { path: floor(name) },
  to: { path: `^src/(${FLOORS.slice(i + 1).join('|')})/` },
}))

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import cycle between files (type-only imports included)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'known-floor',
      comment: 'every file under src/ sits in one of the floors listed in .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(${FLOORS.join('|')})/` },
      to: {},
    },
    ...upward,
    {
      name: 'stats-through-index',
      comment: 'other floors import statistics through src/stats/index.ts',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/stats/' },
      to: { path: '^src/stats/', pathNot: '^src/stats/index[.]ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
  },
}
