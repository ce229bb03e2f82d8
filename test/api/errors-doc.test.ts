// Every error code is documented once in docs/errors.md: the API's, and every code literal anywhere in
// the sources (errors of the actor and node layers included); every failure reason has a row.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { tsFiles } from '../helpers/sources.ts'
import * as errors from '../../api/errors.ts'
import { FAILURE_REASONS } from '../../protocol/failure-reasons.ts'
import { CLOSE_CODES } from '../../protocol/index.ts'

const ROOT = join(import.meta.dirname, '..', '..')
const LAYERS = ['actors', 'node', 'api', 'sim', 'protocol']
const doc = await readFile(join(ROOT, 'docs', 'errors.md'), 'utf8')
const headings = [...doc.matchAll(/^### (BWN_ERR_[A-Z0-9_]+)$/gm)].map(m => m[1]!)

/** Code literals (quoted or in a template) → the first file that names each. */
async function codesInSources (): Promise<{ codes: Map<string, string>, files: number }> {
  const codes = new Map<string, string>()
  let files = 0
  for (const layer of LAYERS) {
    for await (const f of tsFiles(join(ROOT, layer))) {
      files++
      for (const m of (await readFile(f, 'utf8')).matchAll(/['"`](BWN_ERR_[A-Z0-9_]+)/g)) if (!codes.has(m[1]!)) codes.set(m[1]!, relative(ROOT, f))
    }
  }
  return { codes, files }
}

t.test('codes of the API error classes each have a section', async t => {
  const codes = new Set<string>()
  // Error classes only (the module also exports helpers such as withExtensions).
  for (const [name, E] of Object.entries(errors)) if (name !== 'withExtensions') codes.add((new (E as new () => { code: string })()).code)
  t.ok(codes.size >= 20)
  for (const code of codes) t.ok(headings.includes(code), `${code} is documented`)
})

t.test('every code named anywhere in the sources has a section', async t => {
  const { codes, files } = await codesInSources()
  t.ok(files > 100, `scanned ${files} files`)
  // The layers' own error modules are among what the scan finds.
  for (const code of ['BWN_ERR_CHAIN_REJECTED', 'BWN_ERR_ACTOR_TIMEOUT', 'BWN_ERR_DESTINATION_INCOMPLETE', 'BWN_ERR_CONFIG', 'BWN_ERR_KEYSTORE', 'BWN_ERR_CLI', 'BWN_ERR_BULK', 'BWN_ERR_NOT_FOUND']) {
    t.ok(codes.has(code), `the scan finds ${code}`)
  }
  for (const [code, file] of codes) t.ok(headings.includes(code), `${code} (${file}) is documented`)
})

t.test('every failure reason has a row in the failure-reasons table', async t => {
  const section = doc.slice(doc.indexOf('## Failure reasons'))
  const rows = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map(m => m[1]!)
  t.ok(FAILURE_REASONS.length >= 20)
  t.same([...rows].sort(), [...FAILURE_REASONS].sort(), 'the table lists exactly the reasons of protocol/failure-reasons.ts')
})

t.test('no code is documented twice', async t => {
  t.ok(headings.length > 50)
  t.equal(new Set(headings).size, headings.length)
})

t.test('one module per layer defines Error classes', async t => {
  const byLayer = new Map<string, Set<string>>()
  for (const layer of LAYERS) {
    for await (const f of tsFiles(join(ROOT, layer))) {
      if (/class \w+ extends Error\b/.test(await readFile(f, 'utf8'))) byLayer.set(layer, (byLayer.get(layer) ?? new Set()).add(relative(ROOT, f)))
    }
  }
  t.same([...byLayer.get('actors') ?? []], ['actors/errors.ts'])
  t.same([...byLayer.get('node') ?? []], ['node/errors.ts'])
  for (const layer of ['api', 'sim', 'protocol']) t.ok((byLayer.get(layer)?.size ?? 0) <= 1, `${layer}: ${[...byLayer.get(layer) ?? []].join(', ') || 'none'}`)
})

t.test('every WebSocket close code the server uses has a row in the close-code table', async t => {
  const section = doc.slice(doc.indexOf('## WebSocket close codes'))
  t.ok(section.length > 100, 'the section exists')
  for (const [name, code] of Object.entries(CLOSE_CODES)) t.match(section, new RegExp(`^\\| ${code} \\|`, 'm'), `${name} (${code}) is documented`)
})
