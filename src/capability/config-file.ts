import path from 'node:path'
import { parse as parseToml } from 'smol-toml'
import { readBack } from '../sandbox/read-back.js'
import { messageOf } from '../util/errors.js'
import { describeJsonError } from '../util/json-text.js'
import { type Obj, obj } from './facts.js'

/** A config file as a capability reader finds it: its object, absent, or unreadable (with why). */
export type ConfigFile =
  | { state: 'read'; doc: Obj; name: string }
  | { state: 'absent'; name: string }
  | { state: 'unreadable'; name: string; why: string }

/** Largest config file read, bytes: a harness's settings are small. */
const MAX_CONFIG_BYTES = 1024 * 1024

/**
 * A JSON (or, by extension `.toml`, TOML) config file under the attempt's home, parsed. Never through
 * a symbolic link out of the home; a file that does not parse is `unreadable`, never half-read.
 */
export async function readConfigFile(home: string, file: string): Promise<ConfigFile> {
  const abs = path.isAbsolute(file) ? file : path.join(home, file)
  const name = path.relative(home, abs).split(path.sep).join('/') || path.basename(abs)
  let text: string
  try {
    text = await readBack(abs, home)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    return code === 'ENOENT' ? { state: 'absent', name } : { state: 'unreadable', name, why: messageOf(e) }
  }
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES)
    return { state: 'unreadable', name, why: `over ${MAX_CONFIG_BYTES} bytes` }
  const toml = abs.endsWith('.toml')
  try {
    const doc = obj(toml ? parseToml(text) : JSON.parse(text))
    return doc ? { state: 'read', doc, name } : { state: 'unreadable', name, why: 'not an object' }
  } catch (e) {
    // V8 quotes a window of the text in its JSON errors (a key there would travel into the
    // capability manifest and the reports): say where the error is and what kind, never the text.
    if (toml) return { state: 'unreadable', name, why: firstLine(messageOf(e)) }
    const { position, reason } = describeJsonError(text, e)
    return {
      state: 'unreadable',
      name,
      why: `not valid JSON at line ${position.line}, column ${position.col}: ${reason}`,
    }
  }
}

/** Why a capability is unknown when its file could not be read. */
export function fileUnknown(f: ConfigFile, what: string): string {
  if (f.state === 'absent') return `${f.name} absent: ${what} not stated`
  if (f.state === 'unreadable') return `${f.name} unreadable (${f.why}): ${what} unknown`
  return `${f.name} does not set ${what}`
}

function firstLine(s: string): string {
  return (s.split('\n')[0] ?? '').slice(0, 200)
}
