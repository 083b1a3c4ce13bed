import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { main } from '../../src/cli/index.js'
import { printable } from '../../src/util/text.js'
import { captureOutput } from '../support/capture.js'
import { baseManifest } from '../support/manifests.js'

const io = captureOutput()

function manifestWith(panel: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hw-newuser-'))
  const file = path.join(dir, 'm.yml')
  writeFileSync(file, stringify(baseManifest({ panel })))
  return file
}

describe('defects a new user meets first', () => {
  it('an unknown built-in panel is blamed on panel.name at its line, listing the panels that exist', async () => {
    const file = manifestWith({ source: 'builtin', name: 'nope' })
    expect(await main(['validate', file])).toBe(2)
    expect(io.err).toMatch(
      new RegExp(`^error: ${file}:\\d+:\\d+ panel\\.name: there is no built-in panel "nope"`),
    )
    expect(io.err).toContain('help: built-in panels: bridge-files, bridge-state, bridge-tools, core')
  })

  it('a panel.path that does not exist is blamed on panel.path at its line', async () => {
    const file = manifestWith({ source: 'tasks', path: 'no-such-folder' })
    expect(await main(['validate', file])).toBe(2)
    expect(io.err).toMatch(new RegExp(`^error: ${file}:\\d+:\\d+ panel\\.path: no folder `))
  })

  it('task folders without task.toml or tests/ fail validate, each named', async () => {
    const file = manifestWith({ source: 'tasks', path: 'tasks' })
    const tasks = path.join(path.dirname(file), 'tasks')
    mkdirSync(path.join(tasks, 'no-toml', 'tests'), { recursive: true })
    writeFileSync(path.join(tasks, 'no-toml', 'instruction.md'), 'do it\n')
    mkdirSync(path.join(tasks, 'no-tests'), { recursive: true })
    writeFileSync(path.join(tasks, 'no-tests', 'instruction.md'), 'do it\n')
    writeFileSync(path.join(tasks, 'no-tests', 'task.toml'), '')
    expect(await main(['validate', file])).toBe(2)
    expect(io.err).toContain('2 task folder(s) are incomplete')
    expect(io.err).toContain(`${path.join(tasks, 'no-tests')}: no tests/`)
    expect(io.err).toContain(`${path.join(tasks, 'no-toml')}: no task.toml`)
  })

  it('a manifest that is not UTF-8 is refused at the bad byte', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-newuser-'))
    const file = path.join(dir, 'latin1.yml')
    writeFileSync(file, Buffer.from('schema_version: 1\nexperiment: { id: "caf\xe9" }\n', 'latin1'))
    expect(await main(['validate', file])).toBe(2)
    expect(io.err).toBe(
      `error: ${file}:2:23 not UTF-8 text: byte 0xE9 is not valid UTF-8\n  help: save the manifest as UTF-8 (YAML and JSON manifests must be UTF-8)\n`,
    )
  })

  it('an unknown command exits 2 naming it and the nearest command', async () => {
    expect(await main(['brige'])).toBe(2)
    expect(io.err).toContain("error: unknown command 'brige'")
    expect(io.err).toContain('(Did you mean bridge?)')
    // Far from every command: the nearest is named anyway, with the whole list.
    expect(await main(['qqqqqqq'])).toBe(2)
    expect(io.err).toContain("error: unknown command 'qqqqqqq'")
    expect(io.err).toMatch(/the nearest command is \w+; commands: validate, plan, run/)
  })

  it('printed messages carry no control or zero-width characters and no megabyte of input', () => {
    const msg = printable(`error: id "a\u200bb\u001b[31m" ${'x'.repeat(1_000_000)}`)
    expect(msg).not.toMatch(/[\u001b\u200b]/)
    expect(msg.length).toBeLessThan(500)
    expect(msg).toContain('… (')
  })
})

describe('errors with a place', () => {
  it('a YAML alias bomb names the manifest file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hw-newuser-'))
    const file = path.join(dir, 'bomb.yml')
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i)
      const cur = String.fromCharCode(97 + i)
      levels.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`)
    }
    writeFileSync(file, `${levels.join('\n')}\n`)
    expect(await main(['validate', file])).toBe(2)
    expect(io.err).toContain(`error: ${file}: not a usable YAML document`)
    expect(io.err).toMatch(/alias/i)
  })

  it('a plan.json with a repeated leg is refused naming legs[i], not blamed on attempts.jsonl', async () => {
    const { makePlan, writePlan } = await import('../compare/fixtures.js')
    const plan = await makePlan()
    const planFile = writePlan({ ...plan, legs: [...plan.legs, plan.legs[0]!] })
    const out = mkdtempSync(path.join(tmpdir(), 'hw-newuser-'))
    expect(await main(['aggregate', '--plan', planFile, '--artifacts', out, '--out', out])).toBe(2)
    expect(io.err).toContain(`legs[${plan.legs.length}].leg: "${plan.legs[0]!.leg}" repeats legs[0]`)
    expect(io.err).not.toContain('attempts.jsonl')
  })

  it('a pretty-printed plan.json with a syntax error is located at line and column', async () => {
    const { makePlan, writePlan } = await import('../compare/fixtures.js')
    const planFile = writePlan(await makePlan())
    const { readFileSync } = await import('node:fs')
    const text = readFileSync(planFile, 'utf8').replace('"kind": "plan",', '"kind": "plan",,')
    writeFileSync(planFile, text)
    const line = text.split('\n').findIndex((l) => l.includes('"kind": "plan",,')) + 1
    const { loadPlan } = await import('../../src/run/plan-file.js')
    await expect(loadPlan(planFile)).rejects.toMatchObject({
      code: 'plan_invalid',
      where: `${planFile}:${line}:18`,
      message: expect.stringMatching(/^not valid JSON: /),
    })
  })
})
