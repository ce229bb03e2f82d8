import t from 'tap'
import { Packr } from 'msgpackr'
import { cryptoReady, newHotkey, encodeFrame, decodeFrame, MAX_FRAME_BYTES, PROTOCOL_VERSION, sign, unpack, pack, type Announce } from '../../protocol/index.ts'

await cryptoReady()
const alice = newHotkey()
const mallory = newHotkey()
const body: Announce = { role: 'worker', hotkey: alice.address, software: 'bwnet/test', capacity: { slots: 4, bandwidthMbps: 1000 }, dataUrl: null, attachTo: null, noiseKey: 'a'.repeat(64), peerNoiseKey: 'b'.repeat(64), nonce: '0'.repeat(32) }
const now = 1_700_000_000_000

t.test('a signed frame round-trips', async t => {
  const frame = encodeFrame(alice, 'announce', body, { ts: now })
  const res = decodeFrame(frame, { now })
  t.ok(res.ok)
  if (res.ok) {
    t.equal(res.msg.from, alice.address)
    t.equal(res.msg.type, 'announce')
    t.same(res.msg.body, body)
    t.equal(res.msg.v, PROTOCOL_VERSION)
  }
})

t.test('every bad frame is dropped with its reason, never thrown', async t => {
  const good = encodeFrame(alice, 'announce', body, { ts: now })
  const [payload, sig] = unpack<[Uint8Array, Uint8Array]>(good)
  const flipped = Uint8Array.from(payload); flipped[flipped.length - 3] ^= 0x01
  const repack = (p: unknown, s: unknown) => pack([pack(p), s])
  const signedBy = (key: typeof alice, p: unknown) => { const bytes = pack(p); return pack([bytes, sign(key, bytes)]) }
  const base = unpack<Record<string, unknown>>(payload)
  const cases: Array<[string, Uint8Array, string]> = [
    ['tampered payload', pack([flipped, sig]), 'bad_signature'],
    ['forged sender', signedBy(mallory, base), 'bad_signature'],
    ['unsigned', pack([payload, new Uint8Array(0)]), 'unsigned'],
    ['no signature slot', pack([payload]), 'unsigned'],
    ['oversized', new Uint8Array(MAX_FRAME_BYTES + 1), 'oversized'],
    ['garbage', Uint8Array.from([0xc1, 0xff, 0x00]), 'malformed'],
    ['not an array', pack({ a: 1 }), 'malformed'],
    ['payload not a map', signedBy(alice, 42), 'malformed'],
    ['wrong version', signedBy(alice, { ...base, v: PROTOCOL_VERSION + 1 }), 'wrong_version'],
    ['unknown type', signedBy(alice, { ...base, type: 'nope' }), 'unknown_type'],
    ['invalid body', signedBy(alice, { ...base, body: { ...body, capacity: { slots: -1, bandwidthMbps: 1 } } }), 'invalid_body'],
    ['extra body field', signedBy(alice, { ...base, body: { ...body, secret: 'x' } }), 'invalid_body'],
    ['stale', encodeFrame(alice, 'announce', body, { ts: now - 3_600_000 }), 'stale'],
    ['bad sender', repack({ ...base, from: 'not-a-hotkey' }, sig), 'malformed']
  ]
  for (const [name, frame, reason] of cases) {
    const res = decodeFrame(frame, { now })
    t.equal(res.ok, false, name)
    if (!res.ok) t.equal(res.reason, reason, `${name}: ${res.detail}`)
  }
})

t.test('a message addressed to someone else is refused', async t => {
  const frame = encodeFrame(alice, 'announce', body, { ts: now, to: mallory.address })
  const res = decodeFrame(frame, { now, self: alice.address })
  t.equal(res.ok, false)
  t.equal(decodeFrame(frame, { now, self: mallory.address }).ok, true)
})

t.test('random bytes never throw', async t => {
  const p = new Packr()
  for (let i = 0; i < 500; i++) {
    const n = (i * 7919) % 300
    const bytes = Uint8Array.from({ length: n }, (_, j) => (i * 31 + j * 17) & 0xff)
    t.doesNotThrow(() => decodeFrame(bytes, { now }))
  }
  t.doesNotThrow(() => decodeFrame(p.pack([p.pack(null), new Uint8Array(64)]), { now }))
})
