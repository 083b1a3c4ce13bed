import type { Command } from 'commander'
import { publish, publishLine } from '../../github/publish.js'
import { HwError } from '../../util/errors.js'
import { parseIntOption } from './plan.js'

export function registerPublish(program: Command): void {
  program
    .command('publish')
    .description(
      'Publish a decision to GitHub: the tracking issue of each comparison (created only on a confirmed ' +
        'breach) and the experiment’s evaluation-health notice (infrastructure-only problems, never a ' +
        'regression issue), or with --pr the one PR comment. Token from $GITHUB_TOKEN, repository from $GITHUB_REPOSITORY',
    )
    .requiredOption('--comparison <file>', 'comparison.json with decision.json beside it')
    .option('--pr <number>', 'pull request number: update its Harness Watch comment instead', parsePrOption)
    .option('--repo <owner/repo>', 'repository (default: $GITHUB_REPOSITORY)')
    .option('--report-url <url>', 'link to the full report (default: this workflow run)')
    .option(
      '--keep-open',
      'label recovered tracking issues and health notices `recovered` without closing them',
    )
    .option(
      '--dry-run',
      'write nothing to GitHub; say which tracking issue and evaluation-health notice (or, with --pr, PR comment) would be created, updated or skipped, and print its body',
    )
    .addHelpText(
      'after',
      '\nExit code: 0 when published (with --dry-run: when it would be), 1 when the check fails: a confirmed\n' +
        "regression while the manifest's reporting.fail_on_confirmed_regression is true (the default; with\n" +
        '--dry-run too), an evaluation-health error, or a failure to reach GitHub (network, 5xx, rate limit);\n' +
        '2 for a usage error or a refusal GitHub explains (401, 403, 404, 422).',
    )
    .action(async function (
      this: Command,
      opts: {
        comparison: string
        pr?: number
        repo?: string
        reportUrl?: string
        keepOpen?: boolean
        dryRun?: boolean
      },
    ) {
      const verbose = this.optsWithGlobals<{ verbose?: boolean }>().verbose === true
      const token = process.env.GITHUB_TOKEN ?? process.env.GH_TOKEN ?? ''
      if (!token && !opts.dryRun) {
        throw new HwError('github_token_missing', 'no GitHub token: set GITHUB_TOKEN', {
          help: 'a token with issues: write (tracking issues) or pull-requests: write (PR comments)',
        })
      }
      let repo: { owner: string; repo: string } | undefined
      if (opts.repo) {
        const [owner, name, extra] = opts.repo.split('/')
        if (!owner || !name || extra !== undefined)
          throw new HwError('usage', `--repo expects owner/repo, got "${opts.repo}"`)
        repo = { owner, repo: name }
      }
      const r = await publish({
        comparison: opts.comparison,
        token,
        repo,
        pr: opts.pr ?? null,
        reportUrl: opts.reportUrl,
        closeOnRecovery: !opts.keepOpen,
        dryRun: opts.dryRun,
      })
      // The body can be 64k characters: printed only when asked for.
      if (verbose || opts.dryRun) process.stdout.write(`${r.summary}\n\n`)
      process.stdout.write(`${publishLine(r)}\n`)
      if (r.failure) {
        process.stderr.write(`check failed: ${r.failure}\n`)
        process.exitCode = 1
      }
    })
}

/** A pull request number: a whole number ≥ 1. */
function parsePrOption(v: string): number {
  const n = parseIntOption(v)
  if (n < 1) throw new HwError('usage', `--pr is a pull request number (1 or more), got ${n}`)
  return n
}
