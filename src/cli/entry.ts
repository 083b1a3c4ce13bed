// Entry of the bundled CLI (dist/cli/index.js); bin/harness-watch.js imports it.
import { main } from './index.js'

process.exitCode = await main(process.argv.slice(2))
