// What a transfer's filename may be, wherever it is checked (transfer create, the CLI, the node sink's
// begin and name routes): one safe directory entry, in one Unicode form.
//
// Names are NFC-normalized before any use (UAX #15), so `café.txt` typed as NFC (U+00E9) or as NFD
// (e + U+0301) is one name, not two look-alike files. Characters that are invisible or change how a
// name displays are refused (UTS #39 §3.1, UTS #55): bidirectional controls such as U+202E RIGHT-TO-LEFT
// OVERRIDE (`txt.exe` shown as `exe.txt`), and with them every format character (Unicode category Cf:
// zero-width spaces and joiners, U+FEFF, soft hyphen, tag characters), control characters (Cc), line and
// paragraph separators (Zl, Zp), lone surrogates (Cs), noncharacters and the Hangul fillers, which
// display as nothing. docs/transfers.md#filenames.

export const MAX_FILENAME_BYTES = 255
/** A transfer's name may be a relative path (`sub/deeper/b.txt`): at most this many bytes in all… */
export const MAX_PATH_BYTES = 1024
/** …and this many segments. */
export const MAX_PATH_SEGMENTS = 32

// Each class, with the words a refusal uses; the first that matches is reported.
const REFUSED: Array<[RegExp, string]> = [
  [/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/u, 'a bidirectional control character'],
  // eslint-disable-next-line no-control-regex
  [/\p{Cc}/u, 'a control character'],
  [/\p{Cf}/u, 'an invisible format character (Unicode Cf)'],
  [/[\p{Zl}\p{Zp}]/u, 'a line or paragraph separator'],
  [/\p{Cs}/u, 'a lone surrogate'],
  [/[\uFDD0-\uFDEF\uFFFE\uFFFF\u{1FFFE}\u{1FFFF}\u{2FFFE}\u{2FFFF}\u{3FFFE}\u{3FFFF}\u{EFFFE}\u{EFFFF}\u{FFFFE}\u{FFFFF}\u{10FFFE}\u{10FFFF}]/u, 'a noncharacter'],
  [/[\u115F\u1160\u3164\uFFA0]/u, 'an invisible Hangul filler']
]

const hex = (cp: number): string => `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`

/** The name in NFC, the one form every check and every destination sees. */
export function normalizeFilename (name: string): string {
  return name.normalize('NFC')
}

/**
 * Why a filename is refused, or null when it is safe as one directory entry: no separators, no
 * leading dot (hidden files, `.`, `..`, `.partial`), none of the characters above, at most 255 bytes
 * once NFC-normalized. Give it the normalized name (normalizeFilename); a name not in NFC is refused.
 */
export function filenameProblem (name: string): string | null {
  if (name.length === 0) return 'empty'
  for (const [pattern, what] of REFUSED) {
    const found = pattern.exec(name)
    if (found !== null) return `contains ${what}, ${hex(found[0].codePointAt(0)!)} at character ${[...name.slice(0, found.index)].length + 1}`
  }
  if (name !== name.normalize('NFC')) return 'is not in Unicode NFC'
  if (Buffer.byteLength(name) > MAX_FILENAME_BYTES) return `longer than ${MAX_FILENAME_BYTES} bytes`
  if (/[/\\]/.test(name)) return 'contains a path separator'
  if (name.startsWith('.')) return 'starts with a dot'
  return null
}

/**
 * Why a transfer's name is refused, or null when it is safe: one filename, or a relative path of
 * filenames joined by '/' (`sub/deeper/b.txt`, how `bwnet transfer put -r` keeps a tree). Every segment
 * passes filenameProblem, so none is empty (no leading, trailing or doubled '/': nothing absolute),
 * none is '.', '..' or hidden, none holds a '\\'; at most MAX_PATH_SEGMENTS segments and
 * MAX_PATH_BYTES bytes. A destination stores it below its own root, never outside it.
 */
export function pathProblem (name: string): string | null {
  if (name.length === 0) return 'empty'
  if (name !== name.normalize('NFC')) return 'is not in Unicode NFC'
  if (Buffer.byteLength(name) > MAX_PATH_BYTES) return `longer than ${MAX_PATH_BYTES} bytes`
  if (name.startsWith('/')) return 'is an absolute path (relative paths only)'
  const segments = name.split('/')
  if (segments.length > MAX_PATH_SEGMENTS) return `has more than ${MAX_PATH_SEGMENTS} path segments`
  for (const [i, segment] of segments.entries()) {
    if (segment === '') return `has an empty path segment (segment ${i + 1})`
    if (segment === '..' || segment === '.') return `has a '${segment}' path segment`
    const problem = filenameProblem(segment)
    if (problem !== null) return segments.length === 1 ? problem : `has a segment that ${problem.replace(/^(contains|starts|is|longer)/, m => m === 'longer' ? 'is longer' : m)} (segment ${i + 1})`
  }
  return null
}

/** A checked relative path's directory part ('' for a bare name) and its last segment. */
export function splitPath (name: string): { dir: string, base: string } {
  const i = name.lastIndexOf('/')
  return i < 0 ? { dir: '', base: name } : { dir: name.slice(0, i), base: name.slice(i + 1) }
}
