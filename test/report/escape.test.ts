import { describe, expect, it } from 'vitest'
import {
  codeSpan,
  escapeHtml,
  escapeMarkdown,
  jsonForScript,
  neutralizeMentions,
  ZWJ,
} from '../../src/report/escape.js'

describe('escapeMarkdown', () => {
  it('turns HTML into text, breaks mentions and issue references, escapes table pipes and emphasis', () => {
    expect(escapeMarkdown('<img src=x onerror=alert(1)>')).toBe('&lt;img src=x onerror=alert(1)&gt;')
    expect(escapeMarkdown('ping @octocat and @org/team')).toBe(`ping @${ZWJ}octocat and @${ZWJ}org/team`)
    expect(escapeMarkdown('fixes #123')).toBe(`fixes \\#${ZWJ}123`)
    expect(escapeMarkdown('a | b')).toBe('a \\| b')
    expect(escapeMarkdown('*bold* _it_ `code` [x](http://e) ~~s~~')).toBe(
      `\\*bold\\* \\_it\\_ \\\`code\\\` \\[x\\](http:${ZWJ}//e) \\~\\~s\\~\\~`,
    )
    expect(escapeMarkdown('line1\nline2\r\n\tx\u0007')).toBe('line1 line2 x')
    expect(escapeMarkdown('a & b')).toBe('a &amp; b')
  })

  it('makes every kind of GitHub link inert and keeps the text as it reads', () => {
    const cases: [string, string][] = [
      ['https://evil.example/x', `https:${ZWJ}//evil.example/x`],
      ['HTTP://A', `HTTP:${ZWJ}//A`],
      ['go to www.evil.example', `go to www${ZWJ}.evil.example`],
      ['see #1 and GH-2', `see \\#${ZWJ}1 and GH${ZWJ}-2`],
      ['octo/repo#3', `octo/repo\\#${ZWJ}3`],
      ['at deadbeefcafe1234', `at deadbe${ZWJ}efcafe${ZWJ}1234`],
      [
        'sha 0123456789abcdef0123456789abcdef01234567',
        `sha ${'0123456789abcdef0123456789abcdef01234567'.replace(/.{6}(?=.)/g, (x) => x + ZWJ)}`,
      ],
      ['short abc123 stays', 'short abc123 stays'],
    ]
    for (const [input, want] of cases) {
      expect(escapeMarkdown(input)).toBe(want)
      expect(escapeMarkdown(input).replaceAll(ZWJ, '').replaceAll('\\', '')).toBe(input)
    }
  })

  it('leaves e-mail-like text and plain ids readable', () => {
    expect(escapeMarkdown('django__django-11099')).toBe('django\\_\\_django-11099')
    expect(neutralizeMentions('pass@k')).toBe(`pass@${ZWJ}k`)
  })
})

describe('codeSpan', () => {
  it('uses a fence longer than any backtick run and escapes pipes for tables', () => {
    expect(codeSpan('plain')).toBe('`plain`')
    expect(codeSpan('a`b')).toBe('``a`b``')
    expect(codeSpan('`x`')).toBe('`` `x` ``')
    expect(codeSpan('a|b')).toBe('`a\\|b`')
    expect(codeSpan('x\ny')).toBe('`x y`')
    expect(codeSpan('@octocat <b>')).toBe('`@octocat <b>`') // code spans neither ping nor render HTML
  })
})

describe('HTML and script escaping', () => {
  it('escapes element text and attributes', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    )
  })
  it('keeps </script> and <!-- out of embedded JSON and round-trips', () => {
    const v = { id: '</script><script>alert(1)</script><!--', s: 'a\u2028b' }
    const s = jsonForScript(v)
    expect(s).not.toMatch(/<|>|\u2028/)
    expect(JSON.parse(s)).toEqual(v)
  })
})
