// `npm run bench`: runs every benchmark in this folder (each file prints its own figures and targets).
// Pass names to run a subset: `npm run bench -- aggregate telemetry`.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import path from 'node:path'

const dir = import.meta.dirname
const wanted = process.argv.slice(2)
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort()
let failed = 0
for (const f of files) {
  console.log(`\n== bench/${f}`)
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(dir, f)], { stdio: 'inherit' })
  if (r.status !== 0) failed++
}
process.exit(failed > 0 ? 1 : 0)
