// Entry bundled by ncc into dist/index.js; all logic is in main.ts and the pipeline modules.
import { run } from './main.js'

await run()
