// Every error code the API can answer is documented once in docs/errors.md.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import * as errors from '../../api/errors.ts'
import { CLOSE_CODES } from '../../protocol/index.ts'

const doc = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8')
const problemSource = await readFile(new URL('../../api/problem.ts', import.meta.url), 'utf8')
const headings = [...doc.matchAll(/^### (BWN_ERR_[A-Z0-9_]+)$/gm)].map(m => m[1]!)

t.test('codes in api/errors.ts and api/problem.ts each have a section', async t => {
  const codes = new Set<string>()
  // Error classes only (the module also exports helpers such as withExtensions).
  for (const [name, E] of Object.entries(errors)) if (name !== 'withExtensions') codes.add((new (E as new () => { code: string })()).code)
  for (const m of problemSource.matchAll(/'(BWN_ERR_[A-Z0-9_]+)'/g)) codes.add(m[1]!)
  t.ok(codes.size >= 20)
  for (const code of codes) t.ok(headings.includes(code), `${code} is documented`)
})

t.test('no code is documented twice', async t => {
  t.equal(new Set(headings).size, headings.length)
})

t.test('every WebSocket close code the server uses has a row in the close-code table', async t => {
  const section = doc.slice(doc.indexOf('## WebSocket close codes'))
  t.ok(section.length > 100, 'the section exists')
  for (const [name, code] of Object.entries(CLOSE_CODES)) t.match(section, new RegExp(`^\\| ${code} \\|`, 'm'), `${name} (${code}) is documented`)
})
