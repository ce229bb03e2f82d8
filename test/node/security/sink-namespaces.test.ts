// Issue 32 point 5, as the attack was run: org B delivers a name to the orchestrator's built-in sink
// first, to squat it (A's file would land as `name-1.ext` while A's record kept saying `name`), and uses
// names of 254 bytes (no `-1` variant fits) as an existence oracle on A's files (409 when A holds the
// name, 201 otherwise) and to pre-claim them (A's create refused). With namespaces each organization's
// files live apart: both get their own bytes under the name their record reports, and no answer to one
// organization depends on another's files.
import t from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { startTestDevnet, sinkFile, apiClient, upload, waitForStatus, sha256, testBytes, type Api } from '../../helpers/devnet.ts'

const LONG_A = `${'a'.repeat(250)}.pdf` // 254 bytes: "-1" would make 256
const LONG_B = `${'b'.repeat(250)}.pdf`

t.test('two organizations sharing the built-in sink: no squatting, no oracle, no pre-claiming', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const accounts = net.devnet.orchestrator.accounts!
  const hotkey = net.file.nodes[0]!.hotkey
  const orgA = await net.orgId()
  const apiA = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const orgB = (await accounts.createOrganization({ name: 'squatter' })).id
  const apiB = apiClient(net.file.baseUrl, (await accounts.createKey(orgB, { role: 'client', plan: 'enterprise' })).key)

  const deliver = async (api: Api, filename: string, data: Buffer): Promise<any> => {
    const transfer = await upload(api, data, { filename, hotkey })
    const fin = await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
    t.ok([200, 202].includes(fin.status), `finalize ${fin.status}`)
    const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 120_000)
    t.equal(done.status, 'completed', `${filename.slice(0, 20)}: ${JSON.stringify(done.error)}`)
    return done
  }
  /** B's answer to a create, without its ids and times: what B can learn from it. */
  const createAnswer = async (api: Api, filename: string): Promise<unknown> => {
    const res = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: hotkey, total_size: 1000, filename, tier: 'STANDARD' } })
    if (res.status === 201) await api(`/transfers/${res.body.id}`, { method: 'DELETE' }) // cancelled: only the answer matters
    return { status: res.status, code: res.body?.code ?? null, transfer_name: res.body?.transfer_name ?? null, stored_filename: res.body?.stored_filename ?? null }
  }

  // The oracle, asked before A holds the long name.
  const before = await createAnswer(apiB, LONG_A)
  t.same(before, { status: 201, code: null, transfer_name: LONG_A, stored_filename: null }, 'B may create a transfer named like that')

  // Squatting: B delivers A's name first.
  const bytesB = testBytes(300 * 1024, 21)
  const bytesA = testBytes(200 * 1024 + 5, 22)
  const squat = await deliver(apiB, 'invoice-7.pdf', bytesB)
  const victim = await deliver(apiA, 'invoice-7.pdf', bytesA)
  t.equal(victim.stored_filename, 'invoice-7.pdf', 'A\'s record names A\'s file as A asked')
  t.equal(squat.stored_filename, 'invoice-7.pdf', 'and B\'s names B\'s')
  t.equal(sha256(await readFile(sinkFile(net.data, orgA, victim.stored_filename))), sha256(bytesA), 'A\'s stored name holds A\'s bytes')
  t.equal(sha256(await readFile(sinkFile(net.data, orgB, squat.stored_filename))), sha256(bytesB), 'B\'s stored name holds B\'s bytes')

  // A delivers the long name; B's answer for it is what it was before.
  await deliver(apiA, LONG_A, testBytes(1000, 23))
  t.same(await createAnswer(apiB, LONG_A), before, 'B\'s create answers the same whether or not A holds the 254-byte name')

  // Pre-claiming: B delivers a long name before A; A can still create and deliver it, under that name.
  await deliver(apiB, LONG_B, testBytes(1000, 24))
  t.same(await createAnswer(apiA, LONG_B), { status: 201, code: null, transfer_name: LONG_B, stored_filename: null }, 'A\'s create of B\'s long name is accepted')
  const claimed = await deliver(apiA, LONG_B, testBytes(1000, 25))
  t.equal(claimed.stored_filename, LONG_B, 'and A\'s file gets that name')

  // Within one organization the name is taken: a second delivery of it is reported under its variant.
  const second = await deliver(apiA, 'invoice-7.pdf', testBytes(1000, 26))
  t.equal(second.stored_filename, 'invoice-7-1.pdf', 'an organization\'s own clash: the record reports the stored name')
  t.equal(sha256(await readFile(sinkFile(net.data, orgA, 'invoice-7-1.pdf'))), sha256(testBytes(1000, 26)))
  t.same((await readdir(dirname(sinkFile(net.data, orgB, 'x')))).sort(), [LONG_B, 'invoice-7.pdf'].sort(), 'B\'s namespace holds only B\'s files')
  t.equal((await createAnswer(apiA, LONG_A) as { code: string }).code, 'BWN_ERR_FILENAME_TAKEN', 'A\'s own long name taken: refused for A')
})
