// Filenames are one Unicode form and show what they are: NFC and NFD spellings of `café.txt` are one
// name in the sink (the second gets the `-1` variant, never a look-alike twin), and bidirectional
// controls and other invisible characters are refused with a 400 problem.
import t from 'tap'
import Fastify from 'fastify'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cryptoReady, newHotkey, signUrl, authorityOf } from '../../../../protocol/index.ts'
import { sinkRoutes, NodeSinkDriver, namespaceDir } from '../../../../node/adapters/destinations/node-sink.ts'
import { sinkNameRoutes } from '../../../../node/adapters/destinations/sink-names.ts'
import { filenameProblem, normalizeFilename } from '../../../../node/adapters/destinations/filename.ts'
import { sendableName } from '../../../../node/commands/transfer.ts'

await cryptoReady()
const NFC = 'caf\u00e9.txt'
const NFD = 'cafe\u0301.txt'
// [what, name]: each refused.
const INVISIBLE: Array<[string, string]> = [
  ['RIGHT-TO-LEFT OVERRIDE', 'invoice\u202Etxt.exe'],
  ['LEFT-TO-RIGHT EMBEDDING', 'a\u202Ab.txt'],
  ['RIGHT-TO-LEFT ISOLATE', 'a\u2067b.txt'],
  ['RIGHT-TO-LEFT MARK', 'a\u200Fb.txt'],
  ['ARABIC LETTER MARK', 'a\u061Cb.txt'],
  ['ZERO WIDTH SPACE', 'a\u200Bb.txt'],
  ['ZERO WIDTH JOINER', 'a\u200Db.txt'],
  ['BYTE ORDER MARK', '\uFEFFa.txt'],
  ['SOFT HYPHEN', 'pay\u00ADpal.txt'],
  ['TAG LATIN SMALL LETTER A', 'a\u{E0061}.txt'],
  ['LINE SEPARATOR', 'a\u2028b.txt'],
  ['PARAGRAPH SEPARATOR', 'a\u2029b.txt'],
  ['a C1 control', 'a\u0085b.txt'],
  ['DEL', 'a\u007Fb.txt'],
  ['a lone surrogate', 'a\uD800b.txt'],
  ['a noncharacter', 'a\uFFFEb.txt'],
  ['HANGUL FILLER', '\u3164.txt']
]

t.test('the rule: NFC, and no invisible or format characters', async t => {
  t.equal(normalizeFilename(NFD), NFC)
  t.not(NFD, NFC, 'the two spellings differ before normalization')
  t.equal(filenameProblem(NFC), null)
  t.match(filenameProblem(NFD), /NFC/, 'a name not in NFC is not taken as is')
  for (const [what, name] of INVISIBLE) t.ok(filenameProblem(normalizeFilename(name)), what)
  t.match(filenameProblem('invoice\u202Etxt.exe'), /bidirectional control character, U\+202E at character 8/)
  t.match(filenameProblem('a\u200Bb'), /format character \(Unicode Cf\), U\+200B/)
  for (const good of ['data.bin', 'Ünïcödé 2024.csv', '报告.pdf', 'ملف.txt', 'רשימה.txt', '\u{1F600}.png', 'a b.txt']) t.equal(filenameProblem(good), null, good)
})

t.test('the CLI sends the NFC name and refuses an invisible character before any request', async t => {
  t.equal(sendableName(NFD), NFC)
  t.throws(() => sendableName('invoice\u202Etxt.exe'), /U\+202E.*--name/)
})

t.test('the sink: NFC and NFD are one name; U+202E is refused with a 400 problem', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-names-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const coordinator = newHotkey()
  const app = Fastify({ logger: false })
  let baseUrl = ''
  const auth = { trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(baseUrl), now: () => Date.now() }
  await app.register(sinkRoutes, { dir, ...auth, maxChunkBytes: 1024 })
  await app.register(sinkNameRoutes, { dir, ...auth })
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const driver = new NodeSinkDriver({ baseUrl, key: coordinator })
  const org = '6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b' // every file of one organization, in its namespace
  const orgDir = namespaceDir(dir, org)
  const signed = (method: string, path: string): string => signUrl({ method, url: new URL(path, baseUrl), audience: 'bwnet-sink', expiresAt: Date.now() + 60_000, key: coordinator })
  const nameFor = async (filename: string) => {
    const res = await fetch(signed('GET', `/sink/names?${new URLSearchParams({ filename, org })}`))
    return { status: res.status, type: res.headers.get('content-type'), body: await res.json() as { filename?: string, code?: string, detail?: string } }
  }
  const deliver = async (transferId: string, filename: string): Promise<void> => {
    const body = Buffer.from('hello')
    const state = await driver.begin({ transferId, filename, totalSize: body.length, chunkSize: body.length, totalChunks: 1, namespace: org })
    const target = await driver.target(state, { index: 0, offset: 0, length: body.length, attemptSlot: 0 }, Date.now() + 60_000)
    const put = await fetch(target.url, { method: 'PUT', headers: target.headers, body: new Uint8Array(body) })
    await driver.complete(state, [{ index: 0, attemptSlot: 0, etag: put.headers.get('etag') }])
  }

  const first = await nameFor(NFD)
  t.equal(first.body.filename, NFC, `the name asked in NFD is answered in NFC: ${JSON.stringify(first)}`)
  await deliver('t-nfd', NFD)
  t.same(await readdir(orgDir), [NFC], 'the NFD name landed as its NFC form')
  t.equal((await nameFor(NFC)).body.filename, 'caf\u00e9-1.txt', 'the NFC spelling sees the name as taken')
  t.equal((await nameFor(NFD)).body.filename, 'caf\u00e9-1.txt', 'so does the NFD spelling')
  await deliver('t-nfc', NFC)
  const names = (await readdir(orgDir)).sort()
  t.same(names, ['caf\u00e9-1.txt', NFC], 'two files, no look-alike twin')
  t.notOk(names.includes(NFD))

  const refused = await nameFor('invoice\u202Etxt.exe')
  t.equal(refused.status, 400)
  t.match(refused.type, /^application\/problem\+json/)
  t.equal(refused.body.code, 'BWN_ERR_SINK_BAD_FILENAME')
  t.match(refused.body.detail, /U\+202E/)
  const begin = await fetch(signed('PUT', `/sink/uploads/t-rlo?${new URLSearchParams({ filename: 'invoice\u202Etxt.exe', size: '5', chunkSize: '5' })}`), { method: 'PUT' })
  t.equal(begin.status, 400, 'begin refuses it too')
  t.equal((await begin.json() as { code: string }).code, 'BWN_ERR_SINK_BAD_FILENAME')
})
