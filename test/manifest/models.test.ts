import { describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { loadManifest, parseManifestText } from '../../src/manifest/load.js'
import { harnessKey } from '../../src/manifest/models.js'
import { cellRoute, declaredRoutes, isMultiModel, primaryRoute } from '../../src/manifest/schema.js'
import { resolvePanel } from '../../src/panel/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import { PlanSchema } from '../../src/plan/schema.js'
import { summarizeManifest } from '../../src/plan/summary.js'
import { HwError } from '../../src/util/errors.js'
import { baseManifest, writeManifest } from '../support/manifests.js'

const glm = { id: 'glm-4.6', provider: 'scripted', api: 'chat', prices: { input: 0.6, output: 2.2 } }
const sonnet = {
  id: 'claude-sonnet-4-5',
  provider: 'scripted',
  api: 'anthropic',
  prices: { input: 3, output: 15 },
}

/** Two harnesses × two models, declared cell by cell. */
function twoByTwo(over: Record<string, unknown> = {}): Record<string, unknown> {
  const m = baseManifest({
    models: { glm, sonnet },
    cells: [
      { id: 'pi-glm', harness: 'pi', version: '0.73.1', model: 'glm' },
      { id: 'oc-glm', harness: 'opencode', version: '1.18.33', model: 'glm' },
      { id: 'pi-sonnet', harness: 'pi', version: '0.73.1', model: 'sonnet' },
      { id: 'oc-sonnet', harness: 'opencode', version: '1.18.33', model: 'sonnet' },
    ],
    baseline: 'pi-glm',
    ...over,
  })
  delete m.model
  return m
}

function problems(m: Record<string, unknown>): string[] {
  try {
    parseManifestText(stringify(m), 'exp.yml')
  } catch (e) {
    expect(e).toBeInstanceOf(HwError)
    return (e as HwError).details
  }
  throw new Error('expected the manifest to be rejected')
}

describe('manifest: several models, cells declared harness × model', () => {
  it('accepts named routes; each cell drives the route it names', () => {
    const m = parseManifestText(stringify(twoByTwo()), 'exp.yml')
    expect(m.model).toBeUndefined()
    expect(m.cells.map((c) => cellRoute(m, c).id)).toEqual([
      'glm-4.6',
      'glm-4.6',
      'claude-sonnet-4-5',
      'claude-sonnet-4-5',
    ])
    expect(isMultiModel(m)).toBe(true)
    expect(primaryRoute(m).id).toBe('glm-4.6')
    expect(declaredRoutes(m).map((r) => r.path.join('.'))).toEqual(['models.glm', 'models.sonnet'])
    // The same harness configuration on two models shares its key; another harness does not.
    const [piGlm, ocGlm, piSon] = m.cells
    expect(harnessKey(piGlm!)).toBe(harnessKey(piSon!))
    expect(harnessKey(piGlm!)).not.toBe(harnessKey(ocGlm!))
  })

  it('keeps the single model: route valid: every cell uses it, and a cell may also name a named route', () => {
    const one = parseManifestText(stringify(baseManifest()), 'one.yml')
    expect(isMultiModel(one)).toBe(false)
    expect(one.cells.map((c) => cellRoute(one, c).id)).toEqual(['gpt-5-mini', 'gpt-5-mini'])
    const mixed = parseManifestText(
      stringify(
        baseManifest({
          models: { glm },
          cells: [
            { id: 'a', harness: 'pi', version: '0.73.1' },
            { id: 'b', harness: 'pi', version: '0.73.1', model: 'glm' },
          ],
        }),
      ),
      'mixed.yml',
    )
    expect(mixed.cells.map((c) => cellRoute(mixed, c).id)).toEqual(['gpt-5-mini', 'glm-4.6'])
    expect(isMultiModel(mixed)).toBe(true)
  })

  it('a cell naming an unknown model is an error located at its line and field', () => {
    const m = twoByTwo()
    ;(m.cells as Array<Record<string, unknown>>)[3]!.model = 'sonet'
    const text = stringify(m)
    const line = text.split('\n').findIndex((l) => l.includes('model: sonet')) + 1
    let details: string[] = []
    try {
      parseManifestText(text, 'exp.yml')
    } catch (e) {
      details = (e as HwError).details
    }
    expect(details).toHaveLength(1)
    expect(details[0]).toMatch(
      new RegExp(
        `^exp\\.yml:${line}:\\d+ cells\\[3\\]\\.model: unknown model "sonet" \\(models: glm, sonnet\\)$`,
      ),
    )
  })

  it('a cell naming no model with no top-level route, and a manifest with no route at all, are refused', () => {
    const m = twoByTwo()
    delete (m.cells as Array<Record<string, unknown>>)[0]!.model
    expect(problems(m)).toEqual([
      expect.stringMatching(
        /cells\[0\]\.model: cell "pi-glm" names no model and there is no top-level model route: name one of glm, sonnet$/,
      ),
    ])
    const none = baseManifest()
    delete none.model
    expect(problems(none)).toEqual([
      expect.stringMatching(/model: no model route: give `model` .* or `models`/),
    ])
  })

  it('route rules apply to every named route (base URL, scripted settings, injected cells on that route)', () => {
    const m = twoByTwo({
      models: {
        glm: { ...glm, scripted: { cells: { 'pi-sonnet': { caching: false } } } },
        sonnet: { id: 'claude-sonnet-4-5', provider: 'anthropic', api: 'anthropic' },
      },
    })
    expect(problems(m)).toEqual([
      expect.stringMatching(
        /models\.glm\.scripted\.cells\.pi-sonnet: no cell "pi-sonnet" on this route to inject a change into \(cells: pi-glm, oc-glm\)$/,
      ),
      expect.stringMatching(/models\.sonnet: a non-scripted model route needs base_url or base_url_env$/),
    ])
  })
})

describe('plan: several models', () => {
  it('fans out one leg per declared cell and shard; each plan cell carries its route and model id', async () => {
    const loaded = await loadManifest(writeManifest(twoByTwo({ shards: { count: 2 } })))
    const panel = await resolvePanel(loaded.manifest, loaded.dir)
    const plan = PlanSchema.parse(buildPlan(loaded, panel))
    expect(plan.legs.map((l) => l.leg)).toEqual([
      'pi-glm-s0',
      'oc-glm-s0',
      'pi-sonnet-s0',
      'oc-sonnet-s0',
      'pi-glm-s1',
      'oc-glm-s1',
      'pi-sonnet-s1',
      'oc-sonnet-s1',
    ])
    expect(plan.cells.map((c) => [c.id, c.model, c.model_id, c.api])).toEqual([
      ['pi-glm', 'glm', 'glm-4.6', 'chat'],
      ['oc-glm', 'glm', 'glm-4.6', 'chat'],
      ['pi-sonnet', 'sonnet', 'claude-sonnet-4-5', 'anthropic'],
      ['oc-sonnet', 'sonnet', 'claude-sonnet-4-5', 'anthropic'],
    ])
    // Every cell of every model runs the same instances in each shard (blocks pair within a model).
    const s0 = plan.legs.filter((l) => l.shard === 0).map((l) => l.instances.join(','))
    expect(new Set(s0).size).toBe(1)
    const summary = summarizeManifest(loaded, panel, plan)
    expect(summary).toContain('model       glm          glm-4.6 via scripted (chat API)')
    expect(summary).toContain('model       sonnet       claude-sonnet-4-5 via scripted (anthropic API)')
    expect(summary).toMatch(
      /oc-sonnet +opencode@1\.18\.33 +anthropic model sonnet config \w{12} {2}treatment$/m,
    )
    expect(summary).toMatch(
      /pi-sonnet +pi@0\.73\.1 +anthropic model sonnet config \w{12} {2}baseline on sonnet$/m,
    )
    expect(summary).toMatch(/pi-glm +pi@0\.73\.1 +chat +model glm config \w{12} {2}baseline$/m)
  })

  it('a model with no cell running the baseline configuration: its cells are not compared, and validate says so', async () => {
    const m = twoByTwo({
      cells: [
        { id: 'pi-glm', harness: 'pi', version: '0.73.1', model: 'glm' },
        { id: 'oc-glm', harness: 'opencode', version: '1.18.33', model: 'glm' },
        { id: 'oc-sonnet', harness: 'opencode', version: '1.18.33', model: 'sonnet' },
      ],
    })
    const loaded = await loadManifest(writeManifest(m))
    const panel = await resolvePanel(loaded.manifest, loaded.dir)
    const summary = summarizeManifest(loaded, panel, buildPlan(loaded, panel))
    expect(summary).toMatch(/oc-glm +opencode@1\.18\.33 +chat +model glm config \w{12} {2}treatment$/m)
    expect(summary).toMatch(
      /oc-sonnet +opencode@1\.18\.33 +anthropic model sonnet config \w{12} {2}not compared \(no baseline on sonnet\)$/m,
    )
    expect(summary).toContain(
      "warning     model sonnet: no cell runs the baseline's harness configuration (pi@0.73.1, cell pi-glm), so oc-sonnet is compared with nothing; declare that configuration on sonnet too",
    )
    expect(summary).not.toContain('model glm: no cell')
  })

  it('a one-model plan keeps its cells as before (no model fields)', async () => {
    const loaded = await loadManifest(writeManifest(baseManifest()))
    const panel = await resolvePanel(loaded.manifest, loaded.dir)
    const plan = buildPlan(loaded, panel)
    expect(plan.cells[0]).not.toHaveProperty('model')
    expect(plan.cells[0]).not.toHaveProperty('model_id')
  })
})
