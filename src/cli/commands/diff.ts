import type { Command } from 'commander'
import { diffComparisons, readComparison } from '../../compare/diff.js'
import { renderDiffMarkdown } from '../../report/diff.js'
import { strictJson } from '../../util/json.js'

export function registerDiff(program: Command): void {
  program
    .command('diff')
    .description(
      'Per-instance regressions and fixes of each cell between two runs (old and new comparison.json)',
    )
    .argument('<old>', 'comparison.json of the earlier run')
    .argument('<new>', 'comparison.json of the later run')
    .option('--json', 'print the diff as JSON instead of Markdown')
    .option(
      '--allow-different-experiments',
      'diff comparisons of different experiments or with no instance in common (a warning instead of an error)',
    )
    .action(
      async (
        oldFile: string,
        newFile: string,
        opts: { json?: boolean; allowDifferentExperiments?: boolean },
      ) => {
        const d = diffComparisons(await readComparison(oldFile), await readComparison(newFile), {
          allowDifferentExperiments: opts.allowDifferentExperiments === true,
        })
        for (const n of d.notes) process.stderr.write(`warning: ${n}\n`)
        process.stdout.write(opts.json ? strictJson(d) : renderDiffMarkdown(d))
      },
    )
}
