// The API's description: a valid OpenAPI 3.1 document at /openapi.json, generated from the route
// schemas, and documentation pages that load nothing from another host.
import t from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { buildApp } from '../../api/app.ts'
import { testDeps } from '../helpers/api.ts'
import { PROBES, registerProbes } from '../helpers/probes.ts'

const env = testDeps()
const app = await buildApp(env.deps)
await registerProbes(app)
await app.ready()
t.teardown(() => app.close())

type Operation = { responses: Record<string, { content?: Record<string, unknown>, headers?: Record<string, unknown> }>, security?: unknown[], parameters?: Array<{ in: string, name: string, required?: boolean, schema?: { default?: unknown } }>, requestBody?: unknown }
const res = await app.inject({ url: '/openapi.json' })
const spec = res.json() as { openapi: string, paths: Record<string, Record<string, Operation>>, components: { securitySchemes: Record<string, unknown> } }
const jsonEntries = (op: Operation) => Object.values(op.responses).filter(r => r.content?.['application/json'] !== undefined).length

t.test('/openapi.json is a valid OpenAPI 3.1 document', async t => {
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], 'application/json')
  t.equal(spec.openapi, '3.1.0')
  const result = await new Validator().validate(spec)
  t.same(result.errors, undefined, JSON.stringify(result.errors))
  t.ok(result.valid)
})

t.test('the validator does reject a broken document', async t => {
  const broken = structuredClone(spec) as any
  broken.paths['/admin/organizations'].get.responses = 'none'
  t.notOk((await new Validator().validate(broken)).valid)
})

t.test('security schemes follow the interface: consoleKey is X-Api-Key in header', async t => {
  t.match(spec.components.securitySchemes.consoleKey, { type: 'apiKey', in: 'header', name: 'X-Api-Key' })
  t.match(spec.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer' })
  t.same(spec.paths[PROBES.telemetry]!.get!.security, [{ consoleKey: [] }])
  t.same(spec.paths[PROBES.destination]!.get!.security, [{ consoleKey: [] }])
  t.same(spec.paths[PROBES.transfer]!.get!.security, [{ bearerAuth: [] }, { apiKey: [] }])
  t.same(spec.paths['/admin/organizations']!.get!.security, [{ bearerAuth: [] }, { apiKey: [] }])
  t.same(spec.paths['/health']!.get!.security, [], 'health is public (security: [])')
})

t.test('telemetry routes document 8 JSON responses, sell-allowance 7, plus a body-less 304', async t => {
  for (const path of [PROBES.telemetry, PROBES.realtime]) {
    const op = spec.paths[path]!.get!
    t.equal(jsonEntries(op), 8, path)
    t.same(Object.keys(op.responses).sort(), ['200', '304', '400', '401', '402', '403', '404', '429', '500'])
    t.equal(op.responses['304']!.content, undefined)
  }
  const sell = spec.paths[PROBES.sellAllowance]!.get!
  t.equal(jsonEntries(sell), 7)
  t.match(sell.responses['402'], { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } })
})

t.test('every documented route has response schemas; every guarded one its 401/403/429', async t => {
  let operations = 0
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      operations++
      const statuses = Object.keys(op.responses)
      t.ok(statuses.some(s => s.startsWith('2')), `${method} ${path} documents its success`)
      for (const [status, r] of Object.entries(op.responses)) {
        // HEAD answers carry no body, whatever their status.
        if (method === 'head') t.equal(r.content, undefined, `${method} ${path} ${status} has no body`)
        else if (status !== '304') t.ok(r.content !== undefined, `${method} ${path} ${status} has a body schema`)
      }
      if (op.security !== undefined && op.security.length > 0) for (const s of ['401', '403', '429']) t.ok(statuses.includes(s), `${method} ${path} documents ${s}`)
      if (path.includes('{')) t.ok((op.parameters ?? []).length > 0, `${method} ${path} documents its path parameters`)
      if (method === 'post') t.ok(op.requestBody !== undefined, `${method} ${path} documents its body`)
    }
  }
  t.ok(operations >= 16)
})

t.test('a parameter with a default is optional; every operation with input or a key has a 4xx', async t => {
  let defaulted = 0
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      for (const p of op.parameters ?? []) {
        if (p.schema?.default === undefined) continue
        defaulted++
        t.notOk(p.required, `${method} ${path} ${p.in} ${p.name} has a default, so it is optional`)
      }
      for (const [status, r] of Object.entries(op.responses)) t.not((r as { description?: string }).description, 'Default Response', `${method} ${path} ${status} says what it is`)
      const takesInput = (op.parameters ?? []).length > 0 || op.requestBody !== undefined || (op.security ?? []).length > 0
      if (takesInput) t.ok(Object.keys(op.responses).some(s => s.startsWith('4')), `${method} ${path} documents a 4xx`)
    }
  }
  t.ok(defaulted > 0, 'some parameters have defaults')
})

t.test('paid reads document ETag and the credit headers, and no HEAD; every 429 its Retry-After', async t => {
  const get = spec.paths[PROBES.telemetry]!.get!
  t.equal(spec.paths[PROBES.telemetry]!.head, undefined, 'paid reads are GET only')
  t.same(Object.keys(get.responses['200']!.headers ?? {}).sort(), ['ETag', 'X-Credits-Charged', 'X-Credits-Remaining'])
  t.same(Object.keys(get.responses['304']!.headers ?? {}), ['ETag'])
  t.same(Object.values(spec.paths).filter(item => item.head !== undefined), [], 'no HEAD documented anywhere')
  t.same(Object.keys(spec.paths[PROBES.transfer]!.get!.responses['200']!.headers ?? {}), [], 'no ETag where none is sent')
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const r429 = op.responses['429']
      if (r429 !== undefined) t.ok(r429.headers?.['Retry-After'] !== undefined, `${method} ${path} 429 declares Retry-After`)
    }
  }
})

// What a page would load from another host: a file URL (script, style, image, font, data) anywhere
// in HTML/JS/CSS, or a CSS url()/@import. Links a reader may click (project home pages) are not loads.
const FILE_URL = /https?:\/\/[^"'`)\s>\\]+\.(?:js|mjs|css|woff2?|ttf|otf|png|svg|ico|gif|jpe?g|webp|json)(?=[?#"'`)\s>\\]|$)/gi
const CSS_URL = /(?:url\(\s*["']?|@import\s+["'])(https?:\/\/[^"')\s]+)/gi
// Identifiers that look like URLs but are never fetched: XML namespaces and JSON Schema $ids.
const NAMES_ONLY = /^https?:\/\/(www\.w3\.org\/|json-schema\.org\/|raw\.githubusercontent\.com\/ajv-validator\/ajv\/master\/lib\/refs\/data\.json$)/

function externalAssets (text: string): string[] {
  const found = [...text.matchAll(FILE_URL)].map(m => m[0]).concat([...text.matchAll(CSS_URL)].map(m => m[1]!))
  return found.filter(u => !NAMES_ONLY.test(u))
}

async function crawl (start: string): Promise<Map<string, string>> {
  const seen = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0 && seen.size < 30) {
    const url = queue.shift()!
    if (seen.has(url)) continue
    const r = await app.inject({ url })
    const body = r.statusCode === 302 ? '' : r.body
    if (r.statusCode === 302) queue.push(new URL(r.headers.location as string, `http://127.0.0.1${url}`).pathname)
    else if (r.statusCode !== 200) throw new Error(`${url} answered ${r.statusCode}`)
    seen.set(url, body)
    if (/html/.test(String(r.headers['content-type']))) {
      for (const m of body.matchAll(/(?:src|href)\s*=\s*["']([^"']+)["']/g)) {
        const ref = m[1]!
        if (/^https?:/.test(ref)) { seen.set(`external:${ref}`, ''); continue }
        queue.push(new URL(ref, `http://127.0.0.1${url}`).pathname)
      }
    }
  }
  return seen
}

t.test('/docs (Swagger UI) loads only from this host', async t => {
  const pages = await crawl('/docs')
  t.ok([...pages.keys()].some(u => u.endsWith('swagger-ui-bundle.js')), 'the UI bundle is served locally')
  t.ok([...pages.keys()].some(u => u.endsWith('swagger-initializer.js')))
  for (const [url, body] of pages) {
    t.notOk(url.startsWith('external:'), `no page references ${url}`)
    t.same(externalAssets(body), [], `${url} loads nothing from another host`)
  }
  const init = [...pages].find(([u]) => u.endsWith('swagger-initializer.js'))![1]
  t.match(init, /validatorUrl: null/, 'no call to the public validator')
  const csp = (await app.inject({ url: '/docs/' })).headers['content-security-policy'] as string
  t.match(csp, /style-src-elem 'self' 'sha256-[A-Za-z0-9+/]{43}='(;|$)/, "the UI's own <style> allowed by its hash")
  t.notMatch(csp, /unsafe-inline|unsafe-eval|https:|upgrade-insecure-requests|validator\.swagger\.io/, 'no inline source, no other host, no forced https')
})

t.test('/redoc loads only from this host', async t => {
  const page = await app.inject({ url: '/redoc' })
  t.match(page.headers['content-security-policy'], /default-src 'self'/)
  t.match(page.body, /spec-url="openapi.json"/)
  const pages = await crawl('/redoc')
  const bundle = [...pages].find(([u]) => u.endsWith('redoc.standalone.js'))
  t.ok(bundle !== undefined && bundle[1].length > 100_000, 'the ReDoc bundle is served locally')
  for (const [url, body] of pages) {
    t.notOk(url.startsWith('external:'), `no page references ${url}`)
    t.same(externalAssets(body), [], `${url} loads nothing from another host`)
  }
})
