// An http destination's {transferId} and {filename} may sit only in the path or query: in the host, a
// filename would choose the host every connection goes to, past the policy's check at create (which
// sees the placeholders as `x`). Refused at create, and at begin for a destination stored before.
import t from 'tap'
import { cryptoReady } from '../../../../protocol/index.ts'
import { HttpDriver } from '../../../../node/adapters/destinations/http.ts'
import { checkPlaceholders } from '../../../../node/adapters/destinations/url-policy.ts'
import { destinationsApi } from '../../../helpers/api.ts'

await cryptoReady()

const IN_ORIGIN = [
  'http://{filename}.example/x', 'http://files-{transferId}.example/', 'http://example.{filename}/', 'http://{filename}/',
  'http://u{filename}@example/x', 'http://example:{transferId}/x', 'http://[{filename}]/x'
]
const IN_PATH = ['http://example/{transferId}/{filename}', 'https://example/up?name={filename}&id={transferId}', 'http://example/x#{filename}', 'http://example/plain']

t.test('checkPlaceholders: the host, user and port are fixed', async t => {
  for (const url of IN_ORIGIN) t.throws(() => { checkPlaceholders(url, 'config.url') }, { kind: 'url' } as unknown as Error, url)
  for (const url of IN_PATH) t.doesNotThrow(() => { checkPlaceholders(url, 'config.url') }, url)
})

t.test('POST /destinations refuses a placeholder outside the path and query', async t => {
  const api = await destinationsApi(t, { allowPrivate: false }, async () => ['93.184.216.34'])
  const create = async (url: string) => await api.create({ kind: 'http', config: { url } })
  for (const url of ['http://{filename}.example/x', 'http://files-{transferId}.example/']) {
    const res = await create(url)
    t.equal(res.statusCode, 400, url)
    t.match(res.json(), { code: 'BWN_ERR_DESTINATION_URL_REFUSED', reason: 'placeholder' })
  }
  t.equal((await create('http://example.com/{transferId}/{filename}')).statusCode, 201)
})

t.test('a stored destination with a placeholder in its host is refused at begin', async t => {
  const spec = { transferId: 't1', filename: 'a', totalSize: 10, chunkSize: 10, totalChunks: 1 }
  await t.rejects(new HttpDriver({ url: 'http://{filename}.example/x' }).begin(spec), { code: 'BWN_ERR_DESTINATION_REFUSED', message: /placeholder/ })
  await t.rejects(new HttpDriver({ url: 'http://u{filename}@example/x' }).begin(spec), { code: 'BWN_ERR_DESTINATION_REFUSED' }, 'nor in the user part')
  t.match(await new HttpDriver({ url: 'http://example/{filename}' }).begin(spec), { url: 'http://example/a' })
})
