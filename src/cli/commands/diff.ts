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
    .action(async (oldFile: string, newFile: string, opts: { json?: boolean }) => {
      const d = diffComparisons(await readComparison(oldFile), await readComparison(newFile))
      process.stdout.write(opts.json ? strictJson(d) : renderDiffMarkdown(d))
    })
}
