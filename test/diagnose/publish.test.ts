import { describe, expect, it } from 'vitest'
import type { ProposalFile } from '../../src/diagnose/schema.js'
import { prCommentBody, trackingIssueBody } from '../../src/github/render.js'
import { confirmedRun, ctx, firstRun } from '../github/support.js'

const proposal = (over: Partial<ProposalFile> = {}): ProposalFile => ({
  schema_version: 1,
  grounding: { status: 'grounded', attempts: 1, problems: [] },
  answer: {
    hypothesis: 'b offers 9 tool schemas where a offers 7 <img src=x onerror=alert(1)> @team',
    alternative_hypotheses: [],
    category: 'tool_schema',
    supporting_evidence: [
      { instance: 't-2', cell: 'b', event_ids: ['b/t-2/0-1#0'], claim: 'requests carry 9 tools' },
    ],
    counterevidence: [],
    estimated_impact: 'x',
    affected_instances: ['t-2'],
    predicted_observable_change: 'y',
    single_variable_experiment: {
      variable: 'tools offered',
      current_value: '9 tools',
      proposed_value: '7 tools',
      manifest_patch: 'cells:\n  - id: b-candidate\n    harness: opencode\n```\n--> <!-- hw:tracking x -->',
      metric: 'input_fresh_tokens',
      expected_direction: 'decrease',
    },
  },
  analyst: { route: 'scripted', requests: 0, spend_usd: 0 },
  ...over,
})

describe('the short diagnosis in the tracking issue and PR comment', () => {
  it('is published after confirmation: hypothesis, evidence anchors and the manifest patch, escaped', () => {
    const c = {
      ...ctx(confirmedRun()),
      diagnosis: { proposal: proposal(), dossierPath: 'diagnosis/dossier.md' },
    }
    const key = c.decision.comparisons[0]!.key
    for (const body of [
      trackingIssueBody(c, key, { clean_runs: 0, recovered: false } as never),
      prCommentBody(c, key),
    ]) {
      expect(body).toContain('### Diagnosis')
      expect(body).toContain('`b/t-2/0-1#0` (`#timeline-b-t-2-0-1`)')
      expect(body).toContain('&lt;img src=x onerror=alert(1)&gt;')
      expect(body).not.toContain('@team')
      // the patch is one fenced block longer than the backticks inside; it can neither close the
      // block nor open or close an HTML comment
      expect(body).toContain('````yaml\ncells:\n  - id: b-candidate\n    harness: opencode\n```\n')
      expect(body).not.toContain('<!-- hw:tracking x')
      expect(body).toContain('-\u200b-> <!\u200b-- hw:tracking x -\u200b->')
    }
  })

  it('is not published before confirmation', () => {
    const c = { ...ctx(firstRun()), diagnosis: { proposal: proposal(), dossierPath: 'diagnosis/dossier.md' } }
    expect(prCommentBody(c, c.decision.comparisons[0]!.key)).not.toContain('### Diagnosis')
  })

  it('an ungrounded proposal publishes no claim, only where the evidence is', () => {
    const c = {
      ...ctx(confirmedRun()),
      diagnosis: {
        proposal: proposal({
          answer: null,
          grounding: { status: 'ungrounded', attempts: 2, problems: ['x'] },
        }),
        dossierPath: 'diagnosis/dossier.md',
      },
    }
    const body = prCommentBody(c, c.decision.comparisons[0]!.key)
    expect(body).toContain('The analysis was **ungrounded**: no claim is published.')
    expect(body).not.toContain('9 tool schemas')
  })
})
