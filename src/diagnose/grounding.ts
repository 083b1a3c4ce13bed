import { type ProposalAnswer, ProposalAnswerSchema } from './schema.js'

/** What an answer may cite: the dossier's ids and every text the analyst was shown. */
export interface GroundingContext {
  eventIds: ReadonlySet<string>
  instances: ReadonlySet<string>
  cells: ReadonlySet<string>
  /** The report and every tool output the analyst received (numbers are looked up in these). */
  sources: readonly string[]
}

export type Checked = { ok: true; answer: ProposalAnswer } | { ok: false; problems: string[] }

// A number standing on its own: not part of an identifier like `gpt-5`, `t-3` or `b/t-3/0-1#4`.
const STANDALONE = /(?<![\w.#/:-])[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?![\w#/:-]|\.\d)/g
const ANY_NUMBER = /\d+(?:,\d{3})*(?:\.\d+)?/g

function canon(s: string): number {
  return Number(s.replace(/,/g, '').replace(/^\+/, ''))
}

/** Every number the sources contain (commas as thousands separators, signs ignored). */
export function numbersIn(sources: readonly string[]): number[] {
  const out = new Set<number>()
  for (const s of sources) for (const m of s.matchAll(ANY_NUMBER)) out.add(canon(m[0]))
  return [...out]
}

/** A claimed number is grounded when a source number equals it, or rounds to it at its stated decimals. */
function grounded(claim: string, known: number[], knownSet: Set<number>): boolean {
  const v = Math.abs(canon(claim))
  if (knownSet.has(v)) return true
  const decimals = claim.includes('.') ? (claim.split('.')[1]?.length ?? 0) : 0
  const f = 10 ** decimals
  return known.some((k) => Math.round(k * f) / f === v || Math.round(k * 100 * f) / f === v)
}

/** The free-text fields of an answer whose numbers must be grounded (the manifest patch is config). */
function texts(a: ProposalAnswer): string[] {
  const e = a.single_variable_experiment
  return [
    a.hypothesis,
    ...a.alternative_hypotheses,
    ...a.supporting_evidence.map((x) => x.claim),
    ...a.counterevidence.map((x) => x.claim),
    a.estimated_impact,
    a.predicted_observable_change,
    e.variable,
    e.current_value,
    e.proposed_value,
  ]
}

/**
 * Schema first, then grounding: every cited event id, instance and cell exists in the dossier, and every
 * standalone number in the answer's text appears in the report or a tool output (a percentage may be a
 * share ×100). Pure; returns every problem, not just the first.
 */
export function checkAnswer(raw: unknown, ctx: GroundingContext): Checked {
  const parsed = ProposalAnswerSchema.safeParse(raw)
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues
        .slice(0, 20)
        .map((i) => `schema: ${i.path.join('.') || '(root)'}: ${i.message}`),
    }
  }
  const a = parsed.data
  const problems: string[] = []
  for (const [list, label] of [
    [a.supporting_evidence, 'supporting_evidence'],
    [a.counterevidence, 'counterevidence'],
  ] as const) {
    list.forEach((ev, i) => {
      if (!ctx.instances.has(ev.instance))
        problems.push(`${label}[${i}].instance "${ev.instance}" is not in the dossier`)
      if (!ctx.cells.has(ev.cell)) problems.push(`${label}[${i}].cell "${ev.cell}" is not in the dossier`)
      for (const id of ev.event_ids)
        if (!ctx.eventIds.has(id)) problems.push(`${label}[${i}] cites event "${id}", which does not exist`)
    })
  }
  for (const inst of a.affected_instances)
    if (!ctx.instances.has(inst)) problems.push(`affected_instances: "${inst}" is not in the dossier`)
  const known = numbersIn(ctx.sources)
  const knownSet = new Set(known)
  const missing = new Set<string>()
  for (const t of texts(a))
    for (const m of t.matchAll(STANDALONE)) if (!grounded(m[0], known, knownSet)) missing.add(m[0])
  for (const n of missing) problems.push(`the number ${n} appears in no report or tool output`)
  return problems.length === 0 ? { ok: true, answer: a } : { ok: false, problems }
}
