import { defineConfig } from 'vitest/config'

/**
 * The conformance suite (`npm run test:conformance`): real harness CLIs installed from npm, run against
 * the scripted model. Heavy (installs hundreds of MB once into the shared cache, minutes of runs), so it
 * is kept out of `npm test`. `HW_CONFORMANCE=pi,codex` runs a subset.
 */
export default defineConfig({
  test: {
    include: ['test/conformance/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 1_800_000,
    pool: 'forks',
    fileParallelism: false,
  },
})
