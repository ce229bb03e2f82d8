// Issue 10 item 9: a filename that could never be linked in the sink (taken, and too long for a
// `-1` variant) is refused when the transfer is created, not after its delivery.
import t from 'tap'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { startTestDevnet, apiClient, sinkFile } from '../../helpers/devnet.ts'

t.test('taken names are checked at create', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const hotkey = net.file.nodes[0]!.hotkey
  const orgId = await net.orgId()
  const long = `${'n'.repeat(250)}.bin` // 254 bytes: "-1" would make 256
  const medium = `${'m'.repeat(200)}.bin`
  // Files the organization already holds in its namespace of the sink.
  await mkdir(dirname(sinkFile(net.data, orgId, long)), { recursive: true })
  await writeFile(sinkFile(net.data, orgId, long), 'already here')
  await writeFile(sinkFile(net.data, orgId, medium), 'already here')
  const create = (filename: string) => api('/transfers/create', { method: 'POST', json: { sender_hotkey: hotkey, total_size: 1000, filename, tier: 'STANDARD' } })
  const taken = await create(long)
  t.equal(taken.status, 409, 'a 254-byte name already in the sink')
  t.match(taken.headers.get('content-type'), /^application\/problem\+json/)
  t.equal(taken.body.code, 'BWN_ERR_FILENAME_TAKEN')
  t.equal((await create(medium)).status, 201, 'a taken name with room for a -1 variant is fine')
  t.equal((await create(`${'x'.repeat(250)}.bin`)).status, 201, 'a free 254-byte name is fine')
  const list = await api('/transfers?limit=100')
  t.equal(list.body.total, 2, 'nothing was created for the refused name')
})
