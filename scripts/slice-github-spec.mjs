#!/usr/bin/env node
// Cut GitHub's official OpenAPI description (@octokit/openapi, generated/api.github.com.json, ~13 MB)
// down to the operations Harness Watch calls, plus every component they reference, so the test fake
// can validate requests and responses without a 385 MB devDependency.
//
//   cd /tmp && npm pack @octokit/openapi@23.0.2 && tar xzf octokit-openapi-23.0.2.tgz package/generated/api.github.com.json
//   node scripts/slice-github-spec.mjs --spec /tmp/package/generated/api.github.com.json test/fixtures/github-openapi.json
//
// Without operation ids it slices OPERATIONS below. The output is committed; rerun only when the
// product calls a new endpoint.
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The REST operations src/github/ uses (operationId as in GitHub's description). */
const OPERATIONS = [
  'issues/list-for-repo',
  'issues/get',
  'issues/create',
  'issues/update',
  'issues/list-comments',
  'issues/create-comment',
  'issues/update-comment',
  'issues/add-labels',
  'issues/remove-label',
  'users/get-authenticated',
]

function parseArgs(argv) {
  const out = { spec: undefined, file: undefined, ops: [] }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--spec') out.spec = argv[++i]
    else if (!out.file) out.file = a
    else out.ops.push(a)
  }
  if (!out.spec || !out.file) {
    console.error('usage: slice-github-spec.mjs --spec api.github.com.json OUT.json [operationId ...]')
    process.exit(2)
  }
  return out
}

/** Copy the wanted operations (with path-level parameters) and every component they reach. */
export function slice(full, wanted) {
  const want = new Set(wanted)
  const sliced = { openapi: full.openapi, info: full.info, servers: full.servers, paths: {}, components: {} }
  const found = new Set()
  for (const [p, item] of Object.entries(full.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op || typeof op !== 'object' || !want.has(op.operationId)) continue
      sliced.paths[p] ??= {}
      sliced.paths[p][method] = op
      if (item.parameters) sliced.paths[p].parameters = item.parameters
      found.add(op.operationId)
    }
  }
  const missing = [...want].filter((o) => !found.has(o))
  if (missing.length > 0) throw new Error(`operationId not in the description: ${missing.join(', ')}`)
  const seen = new Set()
  const queue = [sliced.paths]
  while (queue.length > 0) {
    const node = queue.pop()
    if (Array.isArray(node)) {
      queue.push(...node)
      continue
    }
    if (!node || typeof node !== 'object') continue
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/') && !seen.has(v)) {
        seen.add(v)
        const [, , section, name] = v.split('/')
        const target = full.components[section][name]
        sliced.components[section] ??= {}
        sliced.components[section][name] = target
        queue.push(target)
      } else queue.push(v)
    }
  }
  return { sliced, operations: found.size, components: seen.size, rewrites: fixNullable(sliced) }
}

/**
 * ajv cannot compile `nullable: true` without `type` (GitHub's description has ~135), and rejects the
 * null GitHub really sends for nullable enums that do not list null (e.g. issue.state_reason).
 * Rewrite both to equivalent JSON Schema; returns the number of rewrites.
 */
function fixNullable(root) {
  let rewrites = 0
  const fix = (node) => {
    if (Array.isArray(node)) {
      for (const x of node) fix(x)
      return
    }
    if (!node || typeof node !== 'object') return
    for (const v of Object.values(node)) fix(v)
    if (node.nullable === true && Array.isArray(node.enum) && !node.enum.includes(null)) {
      node.enum.push(null)
      rewrites++
    }
    if (node.nullable === true && !('type' in node)) {
      const { nullable: _n, description, ...rest } = node
      for (const k of Object.keys(node)) delete node[k]
      if (description) node.description = description
      node.anyOf = [rest, { enum: [null] }]
      rewrites++
    }
  }
  fix(root)
  return rewrites
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const args = parseArgs(process.argv.slice(2))
  const full = JSON.parse(readFileSync(args.spec, 'utf8'))
  const r = slice(full, args.ops.length > 0 ? args.ops : OPERATIONS)
  const text = JSON.stringify(r.sliced)
  writeFileSync(args.file, text)
  console.log(
    `${args.spec} -> ${args.file}: ${r.operations} operations, ${r.components} components, ` +
      `${r.rewrites} nullable rewrites, ${(text.length / 1e3).toFixed(0)} kB`,
  )
}
