import { isNullMark } from '../../grade/bfcl-values.js'

/**
 * Java and JavaScript source literals that may stand for a BFCL ground-truth value of a declared
 * type: BFCL keeps those values as Python objects while the model writes source. Several spellings
 * are offered, most natural first; the importer keeps the first one BFCL's check accepts.
 */
export function literalCandidates(
  value: unknown,
  type: string,
  items: string | undefined,
  language: 'java' | 'javascript',
): string[] {
  const v = plain(value)
  const out = language === 'java' ? javaLiterals(v, type, items) : jsLiterals(v, type, items)
  return [...new Set(out)]
}

/** A dict-of-allowed-lists answer as one concrete object (each key's first allowed value). */
function plain(v: unknown): unknown {
  if (isNullMark(v)) return null
  if (Array.isArray(v)) return v.map(plain)
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      if (Array.isArray(x)) {
        const first = x.find((o) => o !== '')
        if (first !== undefined) out[k] = plain(first)
      } else out[k] = plain(x)
    }
    return out
  }
  return v
}

const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v))

function javaScalar(v: unknown, quoteStrings: boolean): string {
  if (typeof v === 'string') return quoteStrings ? JSON.stringify(v) : v
  if (typeof v === 'number') return String(v)
  if (typeof v === 'boolean') return String(v)
  return text(v)
}

function javaLiterals(v: unknown, type: string, items: string | undefined): string[] {
  if (typeof v === 'string' && !['Array', 'ArrayList', 'HashMap'].includes(type))
    return [v, JSON.stringify(v)]
  switch (type) {
    case 'long':
      return [`${text(v)}L`, text(v)]
    case 'float':
      return [`${text(v)}f`, `${text(v)}.0f`, text(v)]
    case 'double':
      return [text(v), `${text(v)}.0`]
    case 'Array': {
      const list = Array.isArray(v) ? v : [v]
      const t = items === 'String' ? 'String' : items === 'integer' ? 'int' : (items ?? 'Object')
      return [
        `new ${t}[]{${list.map((x) => javaElement(x, items, false)).join(', ')}}`,
        `new ${t}[]{${list.map((x) => javaElement(x, items, true)).join(', ')}}`,
      ]
    }
    case 'ArrayList': {
      const list = Array.isArray(v) ? v : [v]
      return [
        `new ArrayList<>(Arrays.asList(${list.map((x) => javaElement(x, items, true)).join(', ')}))`,
        `new ArrayList<>(Arrays.asList(${list.map((x) => javaElement(x, items, false)).join(', ')}))`,
      ]
    }
    case 'HashMap': {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return [text(v)]
      const puts = Object.entries(v).map(([k, x]) => `put(${JSON.stringify(k)}, ${javaScalar(x, true)});`)
      return [
        puts.length > 0
          ? `new HashMap<String, Object>() {{ ${puts.join(' ')} }}`
          : 'new HashMap<String, Object>()',
      ]
    }
    default:
      return [text(v)]
  }
}

function javaElement(x: unknown, items: string | undefined, quote: boolean): string {
  if (items === 'long' && typeof x === 'number') return `${x}L`
  if (items === 'float' && typeof x === 'number') return `${x}f`
  if (items === 'char' && typeof x === 'string') return `'${x}'`
  return javaScalar(x, quote)
}

function jsLiterals(v: unknown, type: string, items: string | undefined): string[] {
  switch (type) {
    case 'Bigint':
      return [`${text(v)}n`, text(v)]
    case 'String':
    case 'any':
      return typeof v === 'string' ? [v, JSON.stringify(v)] : [text(v)]
    case 'array': {
      if (typeof v === 'string') return [v]
      const list = Array.isArray(v) ? v : [v]
      const el = (x: unknown, q: "'" | '"' | ''): string =>
        typeof x === 'string'
          ? `${q}${x}${q}`
          : Array.isArray(x)
            ? `[${x.map((y) => el(y, q)).join(', ')}]`
            : text(x)
      void items
      return [
        `[${list.map((x) => el(x, "'")).join(', ')}]`,
        `[${list.map((x) => el(x, '"')).join(', ')}]`,
        `[${list.map((x) => el(x, '')).join(', ')}]`,
      ]
    }
    case 'dict': {
      if (typeof v === 'string') return [v]
      if (!v || typeof v !== 'object' || Array.isArray(v)) return [text(v)]
      const entries = Object.entries(v)
      const val = (x: unknown): string =>
        typeof x === 'string'
          ? `'${x}'`
          : Array.isArray(x)
            ? `[${x.map(val).join(', ')}]`
            : x && typeof x === 'object'
              ? `{${Object.entries(x)
                  .map(([k, y]) => `${k}: ${val(y)}`)
                  .join(', ')}}`
              : text(x)
      return [
        entries.length === 0 ? '{}' : `{${entries.map(([k, x]) => `${k}: ${val(x)}`).join(', ')}}`,
        `{${entries.map(([k, x]) => `'${k}': ${val(x)}`).join(', ')}}`,
      ]
    }
    default:
      return typeof v === 'string' ? [v, JSON.stringify(v)] : [text(v)]
  }
}
