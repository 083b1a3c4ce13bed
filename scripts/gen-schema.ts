// Writes manifests/schema.json (JSON Schema of the manifest, for editors) from the zod schema.
// `--check` exits 1 when the committed file is stale (CI).
import { readFileSync, writeFileSync } from 'node:fs'
import { manifestJsonSchema } from '../src/manifest/jsonschema.js'

const file = new URL('../manifests/schema.json', import.meta.url)
const text = `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`
if (process.argv.includes('--check')) {
  let old = ''
  try {
    old = readFileSync(file, 'utf8')
  } catch {}
  if (old !== text) {
    console.error('manifests/schema.json is stale: run `npm run build` and commit it')
    process.exit(1)
  }
} else {
  writeFileSync(file, text)
}
