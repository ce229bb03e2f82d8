import t from 'tap'
import { cryptoReady, newHotkey, signUrl, verifySignedUrl, canonicalRequest, EXPIRES_PARAM, SIGNATURE_PARAM, SIGNER_PARAM } from '../../protocol/index.ts'

await cryptoReady()
const coordinator = newHotkey()
const stranger = newHotkey()
const trusted = new Set([coordinator.address])
const NOW = 1_700_000_000_000

t.test('a signed URL verifies for the same method, path and parameters until it expires', async t => {
  const url = signUrl({ method: 'get', url: 'http://10.0.0.1:8100/chunks/t1/3?worker=w9&task=abc', expiresAt: NOW + 60_000, key: coordinator })
  t.match(url, /^http:\/\/10\.0\.0\.1:8100\/chunks\/t1\/3\?/)
  const ok = verifySignedUrl({ method: 'GET', url, now: NOW, trustedSigners: trusted })
  t.ok(ok.ok)
  if (ok.ok) {
    t.equal(ok.signer, coordinator.address)
    t.equal(ok.expiresAt, NOW + 60_000)
    t.equal(ok.params.get('task'), 'abc')
  }
  const path = new URL(url).pathname + new URL(url).search
  t.ok(verifySignedUrl({ method: 'GET', url: path, now: NOW, trustedSigners: trusted }).ok, 'the host is not signed: a request target verifies')
  t.ok(verifySignedUrl({ method: 'GET', url, now: NOW, trustedSigners: a => a === coordinator.address }).ok, 'a predicate works as the trusted set')
  t.same(verifySignedUrl({ method: 'GET', url, now: NOW + 60_000, trustedSigners: trusted }), { ok: false, reason: 'expired' })
})

t.test('any change breaks the signature', async t => {
  const url = new URL(signUrl({ method: 'PUT', url: 'http://h/sink/uploads/u1/chunks/2?slot=0', expiresAt: NOW + 1000, key: coordinator }))
  const refuse = (u: URL | string, method = 'PUT') => verifySignedUrl({ method, url: u, now: NOW, trustedSigners: trusted })
  t.same(refuse(url, 'DELETE'), { ok: false, reason: 'bad_signature' }, 'method')
  const otherPath = new URL(url); otherPath.pathname = '/sink/uploads/u1/chunks/3'
  t.same(refuse(otherPath), { ok: false, reason: 'bad_signature' }, 'path')
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
  const check = (url: string) => verifySignedUrl({ method: 'GET', url, now: NOW, trustedSigners: trusted })
  t.same(check('/x?a=1'), { ok: false, reason: 'unsigned' })
  const signed = new URL(signUrl({ method: 'GET', url: '/x?a=1', expiresAt: NOW + 1000, key: coordinator }), 'http://h')
  const noSig = new URL(signed); noSig.searchParams.delete(SIGNATURE_PARAM)
  t.same(check(noSig.toString()), { ok: false, reason: 'malformed' })
  const twice = new URL(signed); twice.searchParams.append(SIGNER_PARAM, coordinator.address)
  t.same(check(twice.toString()), { ok: false, reason: 'malformed' })
  const badExpiry = new URL(signed); badExpiry.searchParams.set(EXPIRES_PARAM, 'soon')
  t.same(check(badExpiry.toString()), { ok: false, reason: 'malformed' })
  const byStranger = signUrl({ method: 'GET', url: '/x?a=1', expiresAt: NOW + 1000, key: stranger })
  t.same(check(byStranger), { ok: false, reason: 'untrusted_signer' })
  const forged = new URL(byStranger, 'http://h'); forged.searchParams.set(SIGNER_PARAM, coordinator.address)
  t.same(check(forged.toString()), { ok: false, reason: 'bad_signature' }, "a stranger's signature under the coordinator's name")
  t.throws(() => signUrl({ method: 'GET', url: '/x', expiresAt: 1.5, key: coordinator }), RangeError)
})

t.test('the canonical string is documented and stable', async t => {
  const url = new URL('http://h/a%20b/c?z=2&a=x%2By&a=1&X-Bwn-Signature=ignored')
  t.equal(new TextDecoder().decode(canonicalRequest('put', url)), 'bwnet-signed-url/v1\nPUT\n/a%20b/c\na=1&a=x%2By&z=2')
})
