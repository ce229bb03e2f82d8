// The transport's own bans: a close without a ban records nothing, and the table of banned keys is
// bounded, so fresh keys that are banned once and never seen again do not stay for ever.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import createTestnet from 'hyperdht/testnet.js'
import { SwarmTransport, MAX_BANNED_KEYS } from '../../../node/adapters/swarm-transport.ts'
import { silentLogger } from '../../helpers/logger.ts'

t.test('bans: none for a plain close; at most MAX_BANNED_KEYS, the oldest forgotten first', async t => {
  const testnet = await createTestnet(1, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const transport = new SwarmTransport({ dht: testnet.createNode(), networkId: `bans-${process.pid}`, logger: silentLogger(), events: { onFrame: () => {}, onPeerUp: () => {}, onPeerDown: () => {} } })
  t.teardown(() => transport.stop())
  const key = (): string => randomBytes(32).toString('hex')
  const closed = key()
  transport.disconnect(closed, 0)
  t.notOk(transport.isBanned(closed))
  t.equal(transport.bannedKeys, 0, 'a close with no ban leaves nothing behind')
  const first = key()
  transport.disconnect(first, 60_000)
  t.ok(transport.isBanned(first))
  let last = first
  for (let i = 0; i < MAX_BANNED_KEYS; i++) { last = key(); transport.disconnect(last, 60_000) }
  t.equal(transport.bannedKeys, MAX_BANNED_KEYS, 'bounded')
  t.notOk(transport.isBanned(first), 'the oldest ban was forgotten')
  t.ok(transport.isBanned(last), 'the latest holds')
})
