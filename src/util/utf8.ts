/** Bytes as UTF-8 text: malformed sequences become U+FFFD (never dropped), and how many there were. */
export function decodeUtf8(bytes: Uint8Array): { text: string; malformed: number } {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes)
  // U+FFFD the bytes themselves spelled (EF BF BD) is text, not a replacement.
  let spelled = 0
  for (let i = 0; i + 2 < bytes.length; i++) {
    if (bytes[i] === 0xef && bytes[i + 1] === 0xbf && bytes[i + 2] === 0xbd) spelled++
  }
  let replaced = 0
  for (const ch of text) if (ch === '\uFFFD') replaced++
  return { text, malformed: Math.max(0, replaced - spelled) }
}
