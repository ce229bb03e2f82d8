// Hotkeys: addresses are checked in full however often they are seen; signatures verify only for their signer.
import t from 'tap'
import { createRequire } from 'node:module'
import { cryptoReady, newHotkey, sign, verify, checkHotkey, publicKeyOf, decodedAddresses } from '../../protocol/index.ts'

await cryptoReady()
const require = createRequire(import.meta.url)
const { encodeAddress } = require('@polkadot/util-crypto/address/encode') as typeof import('@polkadot/util-crypto/address/encode')

const alice = newHotkey()
const bob = newHotkey()
const message = new TextEncoder().encode('bwnet')

t.test('a valid hotkey stays valid; a broken checksum or another network prefix never is', async t => {
  for (let i = 0; i < 3; i++) t.same(checkHotkey(alice.address), { ok: true }, `seen ${i + 1} times`)
  const last = alice.address.at(-1) === 'a' ? 'b' : 'a'
  const broken = alice.address.slice(0, -1) + last
  t.equal(checkHotkey(broken).ok, false, 'one character changed')
  t.equal(checkHotkey(broken).ok, false, 'and again')
  const polkadot = encodeAddress(alice.publicKey, 0) // the same key under Polkadot's prefix
  t.equal(checkHotkey(polkadot).ok, false, 'prefix 0 is not a bwnet hotkey')
  t.ok(verify(polkadot, message, sign(alice, message)), 'though it names the same public key for a signature')
  t.equal(checkHotkey(polkadot).ok, false, 'still not a hotkey once decoded for a signature')
  t.equal(checkHotkey('').ok, false)
  t.equal(checkHotkey('not an address').ok, false)
})

t.test('a signature verifies for its signer only, whatever was verified before', async t => {
  const sig = sign(alice, message)
  t.ok(verify(alice.address, message, sig))
  t.ok(verify(alice.address, message, sig), 'twice')
  t.notOk(verify(bob.address, message, sig), 'not for another address')
  t.notOk(verify(alice.address, new TextEncoder().encode('bwnet!'), sig), 'not for another message')
  t.notOk(verify('not an address', message, sig))
  t.ok(verify(publicKeyOf(alice.address), message, sig), 'by public key too')
  const copy = publicKeyOf(alice.address)
  copy.fill(0)
  t.ok(verify(alice.address, message, sig), 'a caller changing its copy of a public key changes nothing here')
})

t.test('decoded addresses are remembered, bounded; ones that do not decode are not', async t => {
  decodedAddresses.clear()
  const k = newHotkey()
  t.same(checkHotkey(k.address), { ok: true })
  t.equal(decodedAddresses.size, 1, 'a hotkey, once checked')
  t.ok(verify(k.address, message, sign(k, message)))
  t.equal(decodedAddresses.size, 1, 'the signature check used the same entry')
  t.equal(checkHotkey('not an address').ok, false)
  t.equal(checkHotkey(k.address.slice(0, -1) + (k.address.at(-1) === 'a' ? 'b' : 'a')).ok, false)
  t.equal(decodedAddresses.size, 1, 'nothing kept for what does not decode')
  const reason = checkHotkey(encodeAddress(k.publicKey, 2))
  t.equal(reason.ok, false)
  t.match(reason, { reason: /prefix/i }, 'another network\'s address says why, remembered or not')
  t.match(checkHotkey(encodeAddress(k.publicKey, 2)), { ok: false, reason: /prefix/i })
  for (let i = 0; i < decodedAddresses.max + 5; i++) checkHotkey(newHotkey().address)
  t.equal(decodedAddresses.size, decodedAddresses.max, 'bounded')
  t.same(checkHotkey(k.address), { ok: true }, 'pushed out, checked afresh')
  decodedAddresses.clear()
})
