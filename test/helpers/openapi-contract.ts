// Checks exchanges against an OpenAPI 3.1 document, as a validating proxy would. A request the
// server accepted (status below 400) must be one the document accepts: its required parameters
// present, a declared body of a declared media type. The answer: the status is one the
// operation declares, the media type is a declared one (no body where none is declared), the body
// matches the declared schema (ajv, JSON Schema 2020-12), and the headers of the contract (ETag, the
// credit headers, Retry-After, Location) are sent only where declared, and valid there.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void
const DOC_ID = 'urn:bwnet:openapi'
/** Headers whose presence the document must declare wherever the server sends them. */
export const CONTRACT_HEADERS = ['etag', 'x-credits-charged', 'x-credits-remaining', 'retry-after', 'location']

export interface Exchange {
  method: string
  /** The document's path template, e.g. /transfers/{id}. */
  path: string
  status: number
  headers: Headers
  body: string
  /** What was sent: query parameter and header names, the body's media type (undefined: no body). */
  request?: { query: string[], headers: string[], contentType?: string }
}

type Json = Record<string, any>

export class OpenApiContract {
  readonly spec: Json
  private readonly ajv: Ajv2020
  private readonly compiled = new Map<string, ValidateFunction>()

  constructor (spec: Json) {
    this.spec = spec
    this.ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats(this.ajv)
    this.ajv.addFormat('binary', true)
    this.ajv.addSchema({ $id: DOC_ID, components: spec.components ?? {} })
  }

  /** Every operation of the document as `METHOD /path`. */
  operations (): string[] {
    const out: string[] = []
    for (const [path, item] of Object.entries(this.spec.paths as Json)) {
      for (const method of ['get', 'head', 'put', 'post', 'delete', 'patch']) if (item[method] !== undefined) out.push(`${method.toUpperCase()} ${path}`)
    }
    return out
  }

  private validator (key: string, schema: Json): ValidateFunction {
    let v = this.compiled.get(key)
    if (v === undefined) {
      const rooted = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`)) as Json
      v = this.ajv.compile(rooted)
      this.compiled.set(key, v)
    }
    return v
  }

  /** A request the server accepted, against what the document requires of it. */
  private checkRequest (key: string, op: Json, req: NonNullable<Exchange['request']>): string[] {
    const problems: string[] = []
    const sent = { query: new Set(req.query), header: new Set(req.headers.map(h => h.toLowerCase())) }
    for (const p of (op.parameters ?? []) as Json[]) {
      if (p.required !== true || (p.in !== 'query' && p.in !== 'header')) continue
      const names = p.in === 'query' ? sent.query : sent.header
      if (!names.has(p.in === 'header' ? String(p.name).toLowerCase() : p.name)) problems.push(`${key}: accepted without ${p.in} parameter ${String(p.name)}, which the document requires`)
    }
    const body = op.requestBody as Json | undefined
    if (req.contentType === undefined) {
      if (body?.required === true) problems.push(`${key}: accepted without a body, which the document requires`)
    } else if (body === undefined) {
      problems.push(`${key}: accepted a ${req.contentType} body, the document declares none`)
    } else if (body.content?.[req.contentType] === undefined) {
      problems.push(`${key}: accepted a ${req.contentType} body, the document declares ${Object.keys(body.content ?? {}).join(', ')}`)
    }
    return problems
  }

  /** What in this exchange the document does not say; empty when they agree. */
  check (ex: Exchange): string[] {
    const key = `${ex.method.toUpperCase()} ${ex.path}`
    const op = (this.spec.paths as Json)[ex.path]?.[ex.method.toLowerCase()] as Json | undefined
    if (op === undefined) return [`${key}: not in the document`]
    const declared = op.responses as Json
    const status = String(ex.status)
    const response = (declared[status] ?? declared[`${status[0]}XX`] ?? declared.default) as Json | undefined
    if (response === undefined) return [`${key}: answered ${status}, the document declares ${Object.keys(declared).join(', ')}`]
    const problems: string[] = []
    const at = `${key} ${status}`
    if (ex.request !== undefined && ex.status < 400) problems.push(...this.checkRequest(key, op, ex.request))

    // Headers: the contract's headers only where declared, and valid; required ones present.
    const headerDecl = new Map(Object.entries((response.headers ?? {}) as Json).map(([name, h]) => [name.toLowerCase(), h as Json]))
    for (const name of CONTRACT_HEADERS) {
      const value = ex.headers.get(name)
      if (value === null) continue
      const decl = headerDecl.get(name)
      if (decl === undefined) { problems.push(`${at}: sends ${name}, not declared`); continue }
      if (decl.schema !== undefined && !this.validator(`${at} header ${name}`, decl.schema)(value)) problems.push(`${at}: header ${name}=${value} does not match its schema`)
    }
    for (const [name, decl] of headerDecl) if (decl.required === true && ex.headers.get(name) === null) problems.push(`${at}: required header ${name} missing`)

    // Body and media type.
    const content = response.content as Json | undefined
    const mediaType = (ex.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
    if (ex.method.toUpperCase() === 'HEAD') {
      if (content !== undefined) problems.push(`${at}: a HEAD answer declares a body`)
      if (ex.body.length > 0) problems.push(`${at}: a HEAD answer has a body`)
      return problems
    }
    if (content === undefined) {
      if (ex.body.length > 0) problems.push(`${at}: answered a ${mediaType} body, none declared`)
      return problems
    }
    const media = content[mediaType] as Json | undefined
    if (media === undefined) return [...problems, `${at}: answered ${mediaType || 'no content type'}, the document declares ${Object.keys(content).join(', ')}`]
    if (media.schema === undefined) return problems
    if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
      let body: unknown
      try { body = JSON.parse(ex.body) } catch { return [...problems, `${at}: the body is not JSON`] }
      const validate = this.validator(`${at} ${mediaType}`, media.schema as Json)
      if (!validate(body)) problems.push(`${at}: body does not match its schema: ${this.ajv.errorsText(validate.errors)} — ${ex.body.slice(0, 300)}`)
    }
    return problems
  }
}
