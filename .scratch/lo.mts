import { testBackend } from '../test/support/container.ts'
import { removeLeftovers } from '../src/sandbox/container/cleanup.ts'
const rt = await testBackend().runtime()
console.log(await removeLeftovers(rt))
