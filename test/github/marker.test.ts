import { describe, expect, it } from 'vitest'
import {
  comparisonKey,
  identityMarker,
  parseIdentity,
  parseState,
  selfKey,
  stateMarker,
} from '../../src/github/marker.js'

describe('markers', () => {
  it('the identity marker is the first line, versioned, and keyed by experiment and comparison', () => {
    const m = identityMarker('tracking', comparisonKey('p0', 'openhands', 'opencode'))
    expect(m).toBe('<!-- harness-watch:v1 kind=tracking key=p0/openhands-vs-opencode -->')
    expect(parseIdentity(`${m}\r\nbody`)).toEqual({ kind: 'tracking', key: 'p0/openhands-vs-opencode' })
    expect(identityMarker('pr-report', selfKey('p0', 'pi'))).toBe(
      '<!-- harness-watch:v1 kind=pr-report key=p0/self/pi -->',
    )
  })

  it('only the first line counts; other versions and kinds are not ours', () => {
    const m = identityMarker('tracking', 'e/a-vs-b')
    expect(parseIdentity(`text\n${m}`)).toBeNull()
    expect(parseIdentity(m.replace('v1', 'v2'))).toBeNull()
    expect(parseIdentity(m.replace('tracking', 'other'))).toBeNull()
    expect(parseIdentity(`${m} trailing`)).toBeNull()
    expect(parseIdentity(null)).toBeNull()
  })

  it('keys that could end or forge a comment are refused', () => {
    expect(() => identityMarker('tracking', 'a -->x')).toThrow(/invalid marker key/)
    expect(() => identityMarker('tracking', 'a--b')).toThrow(/invalid marker key/)
  })

  it('state round-trips through base64url on the second line; garbage reads as no state', () => {
    const state = {
      clean_runs: 1,
      confirmed_breaches: 2,
      last_status: 'clean',
      last_run: 'x --> y',
      recovered: false,
    }
    const body = `${identityMarker('tracking', 'e/a-vs-b')}\n${stateMarker(state)}\n`
    expect(stateMarker(state)).toMatch(/^<!-- harness-watch:v1 state=[A-Za-z0-9_-]+ -->$/)
    expect(parseState(body)).toEqual(state)
    expect(
      parseState(`${identityMarker('tracking', 'e/a-vs-b')}\n<!-- harness-watch:v1 state=!!! -->`),
    ).toBeNull()
    expect(
      parseState(
        `x\n<!-- harness-watch:v1 state=${Buffer.from('{"clean_runs":-1}').toString('base64url')} -->`,
      ),
    ).toBeNull()
  })
})
