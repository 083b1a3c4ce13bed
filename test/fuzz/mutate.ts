import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator'

/** A seeded source of mutations (pure-rand xoroshiro128+): the same seed gives the same cases. */
export class Mutator {
  private readonly rng: RandomGenerator

  constructor(seed: number) {
    this.rng = xoroshiro128plus(seed)
  }

  int(lo: number, hi: number): number {
    return uniformInt(this.rng, lo, hi)
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(0, xs.length - 1)] as T
  }

  /**
   * One text mutation of `text` (JSON, JSON Lines or YAML): an extreme or malformed value in place of
   * a number or string, a long or control-character string, a removed, inserted or repeated part, a
   * truncation, a renamed key. Returns the new text and the operator's name.
   */
  mutate(text: string): { text: string; op: string } {
    const ops: [string, () => string | null][] = [
      ['number', () => this.replaceMatch(text, /-?\d+(\.\d+)?(e[+-]?\d+)?/g, NUMBERS)],
      ['string', () => this.replaceMatch(text, /"[^"\n]{0,80}"/g, STRINGS)],
      [
        'value-kind',
        () =>
          this.replaceMatch(
            text,
            /: ?("[^"\n]*"|-?\d[\d.e+-]*|true|false|null)/g,
            KINDS.map((k) => `: ${k}`),
          ),
      ],
      ['delete-char', () => this.splice(text, 1, '')],
      [
        'insert-char',
        () =>
          this.splice(
            text,
            0,
            this.pick([
              '{',
              '}',
              '[',
              ']',
              ',',
              ':',
              '"',
              '\n',
              '\u0000',
              '\u001b',
              ' ',
              '\\',
              '#',
              '&a',
              '*a',
              '!!',
              '\t',
            ]),
          ),
      ],
      ['truncate', () => text.slice(0, this.int(0, Math.max(0, text.length - 1)))],
      [
        'repeat-line',
        () => {
          const lines = text.split('\n')
          const i = this.int(0, lines.length - 1)
          lines.splice(i, 0, lines[i] ?? '')
          return lines.join('\n')
        },
      ],
      [
        'drop-line',
        () => {
          const lines = text.split('\n')
          lines.splice(this.int(0, lines.length - 1), 1)
          return lines.join('\n')
        },
      ],
      [
        'rename-key',
        () => this.replaceMatch(text, /"?[a-z_]{2,30}"?(?=:)/g, ['"zz_unknown"', 'id', '""', '"\u200bid"']),
      ],
    ]
    for (let tries = 0; tries < 8; tries++) {
      const [op, f] = this.pick(ops)
      const out = f()
      if (out !== null && out !== text) return { text: out, op }
    }
    return { text: `${text}\n{`, op: 'append-brace' }
  }

  private splice(text: string, remove: number, insert: string): string {
    const at = this.int(0, text.length)
    return text.slice(0, at) + insert + text.slice(at + remove)
  }

  private replaceMatch(text: string, re: RegExp, choices: readonly string[]): string | null {
    const matches = [...text.matchAll(re)]
    if (matches.length === 0) return null
    const m = this.pick(matches)
    const at = m.index ?? 0
    return text.slice(0, at) + this.pick(choices) + text.slice(at + m[0].length)
  }
}

const NUMBERS = [
  '1e308',
  '-1e308',
  '-1',
  '-0.5',
  '1e20',
  '0',
  '3000000',
  '2147483648',
  '1.5',
  '9007199254740993',
  'NaN',
  'Infinity',
  '1e-320',
  '-0',
]
const LONG = 'x'.repeat(20_000)
const STRINGS = [
  '""',
  `"${LONG}"`,
  '"\\u001b[31mred\\u001b[0m"',
  '"a\\u0000b"',
  '"../../etc/passwd"',
  '"\\u200bzero-width"',
  '"\\ud800"',
  '"2026-13-45T99:99:99Z"',
  '"resolved"',
  '"<script>alert(1)</script>"',
]
const KINDS = ['null', '[]', '{}', 'true', '"1"', '-1', '1e308', `"${LONG}"`, '[1, [2, [3]]]']
