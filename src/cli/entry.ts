// Entry of the bundled CLI (dist/cli/index.js); bin/harness-watch.js imports it.
import { main } from './index.js'

// `harness-watch … | head` closes the pipe early: that is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0)
    throw e
  })
}

process.exitCode = await main(process.argv.slice(2))
