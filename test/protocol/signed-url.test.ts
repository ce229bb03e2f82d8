import t from 'tap'
import {
  cryptoReady, newHotkey, signUrl, verifySignedUrl, canonicalRequest, authorityOf, requestTarget,
  AUDIENCE_PARAM, EXPIRES_PARAM, SIGNATURE_PARAM, SIGNER_PARAM, mintedUrls, type VerifyUrlOptions
} from '../../protocol/index.ts'

await cryptoReady()
const coordinator = newHotkey()
const stranger = newHotkey()
const trusted = new Set([coordinator.address])
const NOW = 1_700_000_000_000
const HERE = '10.0.0.1:8100'
const at = (url: string | URL, over: Partial<VerifyUrlOptions> = {}) =>
  verifySignedUrl({ method: 'GET', url, authority: HERE, audience: 'bwnet-data', now: NOW, trustedSigners: trusted, ...over })

t.test('a signed URL verifies at its own authority, for its audience, method, path and parameters, until it expires', async t => {
  const url = signUrl({ method: 'get', url: 'http://10.0.0.1:8100/chunks/t1/3?worker=w9&task=abc', audience: 'bwnet-data', expiresAt: NOW + 60_000, key: coordinator })
  t.match(url, /^http:\/\/10\.0\.0\.1:8100\/chunks\/t1\/3\?/)
  t.equal(new URL(url).searchParams.get(AUDIENCE_PARAM), 'bwnet-data')
  const ok = at(url)
  t.ok(ok.ok)
  if (ok.ok) {
    t.equal(ok.signer, coordinator.address)
    t.equal(ok.expiresAt, NOW + 60_000)
    t.equal(ok.params.get('task'), 'abc')
  }
  t.ok(at(requestTarget(url)).ok, 'the request target verifies against the authority the endpoint knows')
  t.ok(at(url, { trustedSigners: a => a === coordinator.address }).ok, 'a predicate works as the trusted set')
  t.same(at(url, { now: NOW + 60_000 }), { ok: false, reason: 'expired' })
})

t.test('a token replayed anywhere else is refused: other authority, audience, method, path', async t => {
  const url = signUrl({ method: 'PUT', url: 'http://attacker.example:9000/sink/uploads/victim/chunks/0?slot=0', audience: 'http-destination', expiresAt: NOW + 60_000, key: coordinator })
  const target = requestTarget(url)
  t.ok(at(target, { method: 'PUT', authority: 'attacker.example:9000', audience: 'http-destination' }).ok, 'valid where it was minted for')
  t.same(at(target, { method: 'PUT', authority: '127.0.0.1:8000', audience: 'http-destination' }), { ok: false, reason: 'bad_signature' }, 'other authority')
  t.same(at(target, { method: 'PUT', authority: 'attacker.example:9000', audience: 'bwnet-sink' }), { ok: false, reason: 'wrong_audience' }, 'other audience')
  const relabelled = new URL(url); relabelled.searchParams.set(AUDIENCE_PARAM, 'bwnet-sink')
  t.same(at(relabelled, { method: 'PUT', authority: 'attacker.example:9000', audience: 'bwnet-sink' }), { ok: false, reason: 'bad_signature' }, 'audience parameter rewritten')
  t.same(at(target, { method: 'DELETE', authority: 'attacker.example:9000', audience: 'http-destination' }), { ok: false, reason: 'bad_signature' }, 'other method')
  const otherPath = new URL(url); otherPath.pathname = '/sink/uploads/victim/chunks/1'
  t.same(at(otherPath, { method: 'PUT', authority: 'attacker.example:9000', audience: 'http-destination' }), { ok: false, reason: 'bad_signature' }, 'other path')
  t.same(at(target, { method: 'PUT', authority: 'attacker.example:443', audience: 'http-destination' }), { ok: false, reason: 'bad_signature' }, 'same host, other port')
})

t.test('authorities are host:port with the port always written', async t => {
  t.equal(authorityOf('http://Example.COM/x'), 'example.com:80')
  t.equal(authorityOf('https://example.com/x'), 'example.com:443')
  t.equal(authorityOf('http://[::1]:8000/'), '[::1]:8000')
  t.throws(() => signUrl({ method: 'GET', url: '/path-only', audience: 'bwnet-data', expiresAt: NOW, key: coordinator }), 'an unanchored path cannot be signed')
})

t.test('any change breaks the signature', async t => {
  const url = new URL(signUrl({ method: 'PUT', url: 'http://10.0.0.1:8100/sink/uploads/u1/chunks/2?slot=0', audience: 'bwnet-sink', expiresAt: NOW + 1000, key: coordinator }))
  const refuse = (u: URL | string, method = 'PUT') => at(u, { method, audience: 'bwnet-sink' })
  t.ok(refuse(url).ok)
  t.same(refuse(url, 'DELETE'), { ok: false, reason: 'bad_signature' }, 'method')
  const otherParam = new URL(url); otherParam.searchParams.set('slot', '1')
  t.same(refuse(otherParam), { ok: false, reason: 'bad_signature' }, 'parameter value')
  const extraParam = new URL(url); extraParam.searchParams.append('extra', '1')
  t.same(refuse(extraParam), { ok: false, reason: 'bad_signature' }, 'added parameter')
  const later = new URL(url); later.searchParams.set(EXPIRES_PARAM, String(NOW + 10_000_000))
  t.same(refuse(later), { ok: false, reason: 'bad_signature' }, 'expiry')
  const reordered = new URL(url); reordered.search = [...url.searchParams].reverse().map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')
  t.ok(refuse(reordered).ok, 'parameter order does not matter')
})

t.test('unsigned, malformed and untrusted URLs are refused', async t => {
  t.same(at('/x?a=1'), { ok: false, reason: 'unsigned' })
  const signed = new URL(signUrl({ method: 'GET', url: 'http://10.0.0.1:8100/x?a=1', audience: 'bwnet-data', expiresAt: NOW + 1000, key: coordinator }))
  const noSig = new URL(signed); noSig.searchParams.delete(SIGNATURE_PARAM)
  t.same(at(noSig), { ok: false, reason: 'malformed' })
  const noAudience = new URL(signed); noAudience.searchParams.delete(AUDIENCE_PARAM)
  t.same(at(noAudience), { ok: false, reason: 'malformed' })
  const twice = new URL(signed); twice.searchParams.append(SIGNER_PARAM, coordinator.address)
  t.same(at(twice), { ok: false, reason: 'malformed' })
  const badExpiry = new URL(signed); badExpiry.searchParams.set(EXPIRES_PARAM, 'soon')
  t.same(at(badExpiry), { ok: false, reason: 'malformed' })
  // The same 64 bytes spelled with the last character's unused bits set: one signature, one spelling.
  const sig = signed.searchParams.get(SIGNATURE_PARAM)!
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const respelled = new URL(signed); respelled.searchParams.set(SIGNATURE_PARAM, sig.slice(0, 85) + alphabet[alphabet.indexOf(sig[85]!) | 1])
  t.same(Buffer.from(respelled.searchParams.get(SIGNATURE_PARAM)!, 'base64url'), Buffer.from(sig, 'base64url'), 'the respelling decodes to the same bytes')
  t.same(at(respelled), { ok: false, reason: 'malformed' }, 'and is refused')
  t.ok(at(signed).ok, 'the signed spelling passes')
  const byStranger = signUrl({ method: 'GET', url: 'http://10.0.0.1:8100/x?a=1', audience: 'bwnet-data', expiresAt: NOW + 1000, key: stranger })
  t.same(at(byStranger), { ok: false, reason: 'untrusted_signer' })
  const forged = new URL(byStranger); forged.searchParams.set(SIGNER_PARAM, coordinator.address)
  t.same(at(forged), { ok: false, reason: 'bad_signature' }, "a stranger's signature under the coordinator's name")
  t.throws(() => signUrl({ method: 'GET', url: 'http://h/x', audience: 'bwnet-data', expiresAt: 1.5, key: coordinator }), RangeError)
})

t.test('the canonical string is documented and stable', async t => {
  const url = new URL('http://h/a%20b/c?z=2&a=x%2By&a=1&X-Bwn-Signature=ignored')
  t.equal(new TextDecoder().decode(canonicalRequest('put', 'H:80', 'bwnet-sink', url)), 'bwnet-signed-url/v2\nbwnet-sink\nPUT\nh:80\n/a%20b/c\na=1&a=x%2By&z=2')
})

t.test('a URL signed in this process is checked against what was signed; nothing else rides on that', async t => {
  const url = signUrl({ method: 'PUT', url: 'http://10.0.0.1:8100/sink/uploads/u1/chunks/0?slot=1', audience: 'bwnet-sink', expiresAt: NOW + 60_000, key: coordinator })
  const target = requestTarget(url)
  const put = (u: string | URL, over: Partial<VerifyUrlOptions> = {}) => at(u, { method: 'PUT', audience: 'bwnet-sink', ...over })
  const hits = mintedUrls.hits
  t.ok(put(target).ok)
  t.equal(mintedUrls.hits, hits + 1, 'answered from memory')

  // The same signature over anything else is not vouched for and fails the real check.
  const other = new URL(url); other.searchParams.set('slot', '2')
  t.same(put(other), { ok: false, reason: 'bad_signature' }, 'another parameter value')
  t.same(put(target, { authority: '10.0.0.2:8100' }), { ok: false, reason: 'bad_signature' }, 'another authority')
  t.same(put(target, { method: 'POST' }), { ok: false, reason: 'bad_signature' }, 'another method')
  t.same(put(target.replace('/chunks/0', '/chunks/1')), { ok: false, reason: 'bad_signature' }, 'another path')
  const claimed = new URL(url); claimed.searchParams.set(SIGNER_PARAM, stranger.address)
  t.same(put(claimed, { trustedSigners: new Set([coordinator.address, stranger.address]) }), { ok: false, reason: 'bad_signature' }, 'another signer named')
  t.equal(mintedUrls.hits, hits + 1, 'none of them matched what was signed')

  t.same(put(target, { now: NOW + 60_000 }), { ok: false, reason: 'expired' }, 'expired, as without the memory')
  t.equal(mintedUrls.hits, hits + 2, 'an expired URL this process minted is known without the arithmetic too')
  t.same(put(target, { trustedSigners: new Set() }), { ok: false, reason: 'untrusted_signer' }, 'the trusted set is still asked')

  mintedUrls.clear()
  t.ok(put(target).ok, 'forgotten, it verifies the long way')
  t.equal(mintedUrls.hits, hits + 2)

  const thirdParty = signUrl({ method: 'PUT', url: 'http://elsewhere.example/x', audience: 'http-destination', expiresAt: NOW + 60_000, key: coordinator })
  t.ok(thirdParty)
  t.equal(mintedUrls.size, 0, 'a URL for a third-party server is not kept: no bwnet endpoint checks it')

  for (let i = 0; i < mintedUrls.max + 10; i++) signUrl({ method: 'GET', url: `http://10.0.0.1:8100/c/${i}`, audience: 'bwnet-data', expiresAt: NOW + 60_000, key: coordinator })
  t.equal(mintedUrls.size, mintedUrls.max, 'bounded')
  mintedUrls.clear()
})

t.test('only a full check is announced and may be refused: a forged signature and an expired URL count, a minted URL does not', async t => {
  mintedUrls.clear()
  const events: string[] = []
  const hooks = (allow = true): Partial<VerifyUrlOptions> => ({
    beforeFullCheck: () => { events.push('check'); if (!allow) throw new Error('refused unchecked') },
    fullCheckFailed: () => { events.push('failed') }
  })
  const url = signUrl({ method: 'GET', url: 'http://10.0.0.1:8100/c/1', audience: 'bwnet-data', expiresAt: NOW + 60_000, key: coordinator })
  t.ok(at(url, hooks()).ok)
  t.same(at(url, { now: NOW + 60_000, ...hooks() }), { ok: false, reason: 'expired' }, 'a minted URL, expired')
  t.same(events, [], 'a URL this process minted takes no full check, fresh or expired')
  const forged = new URL(url); forged.searchParams.set(SIGNATURE_PARAM, Buffer.alloc(64, 7).toString('base64url').slice(0, 85) + 'A')
  t.same(at(forged, hooks()), { ok: false, reason: 'bad_signature' })
  t.same(events, ['check', 'failed'], 'a forged signature: checked, failed')
  mintedUrls.clear() // as after a restart
  events.length = 0
  t.ok(at(url, hooks()).ok)
  t.same(events, ['check'], 'a genuine URL not minted here: checked, passed')
  events.length = 0
  t.same(at(url, { now: NOW + 60_000, ...hooks() }), { ok: false, reason: 'expired' })
  t.same(events, ['check', 'failed'], 'an expired genuine URL cost a full check: it counts as failed')
  t.throws(() => at(url, hooks(false)), /refused unchecked/, 'the hook refuses before the arithmetic')
  mintedUrls.clear()
})
