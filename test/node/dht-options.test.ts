// The DHT options of a standalone node: a loopback node is declared reachable, since sampling for it
// under load left peers unable to connect for tens of seconds (test/node/two-nodes.test.ts failed so).
import t from 'tap'
import { dhtOptions } from '../../node/node.ts'

const bootstrap = ['127.0.0.1:30001']

t.test('a node bound to loopback is ephemeral and not firewalled', async t => {
  for (const host of ['127.0.0.1', '127.0.0.2', '::1']) {
    t.same(dhtOptions({ bootstrap, dhtHost: host, dhtPort: null }), { bootstrap, host, ephemeral: true, firewalled: false }, host)
  }
})

t.test('a node on another address finds out whether it is firewalled', async t => {
  const opts = dhtOptions({ bootstrap, dhtHost: '10.0.0.11', dhtPort: null })
  t.same(opts, { bootstrap, host: '10.0.0.11', ephemeral: true })
  t.notOk('firewalled' in opts, 'left to the DHT')
  t.same(dhtOptions({ bootstrap, dhtHost: null, dhtPort: null }), { bootstrap, ephemeral: true })
})

t.test('a fixed port makes a persistent, reachable DHT node', async t => {
  t.same(dhtOptions({ bootstrap, dhtHost: '10.0.0.2', dhtPort: 49738 }), { bootstrap, host: '10.0.0.2', port: 49738, anyPort: false, ephemeral: false, firewalled: false })
})
