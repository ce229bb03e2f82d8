// What never reaches a log line: API keys (`bwn_<id>_<secret>`, whatever header, query parameter or
// message carries them) and the signatures of signed or presigned URLs (X-Bwn-Signature, X-Amz-Signature,
// ...: a logged signed URL is a replayable token). Query parameters that carry credentials are
// redacted by name; anything key-shaped is redacted wherever it appears. Used by the API's request
// serializer (api/app.ts) and the node's root logger (node/logger.ts).

export const REDACTED = '[redacted]'

/** Query parameters whose value is a credential or a signature (case-insensitive). */
export const SECRET_PARAMS: readonly string[] = [
  'x-bwn-signature', 'x-amz-signature', 'x-amz-credential', 'x-amz-security-token', 'signature', 'sig',
  'token', 'access_token', 'api_key', 'apikey', 'api-key', 'key', 'secret', 'password'
]
const SECRET_PARAM_SET = new Set(SECRET_PARAMS)
/** An API key: the public id stays (it names the key), the secret goes. */
const KEY_SHAPED = /\b(bwn_[0-9a-f]{16}_)[A-Za-z0-9_-]{8,}/g
/** `name=value` of a secret parameter inside any text (a URL in an error message, say). */
const PARAM_IN_TEXT = new RegExp(`([?&;\\s"'](?:${SECRET_PARAMS.map(p => p.replace(/[-_]/g, '[-_]')).join('|')})=)[^&\\s"'#]*`, 'gi')

/** A text with every key-shaped value and secret query parameter value replaced. */
export function redactText (text: string): string {
  if (!text.includes('bwn_') && !text.includes('=')) return text
  return text.replace(KEY_SHAPED, `$1${REDACTED}`).replace(PARAM_IN_TEXT, `$1${REDACTED}`)
}

/** A request target (`/path?query`) or URL with secret parameter values redacted; the path stays. */
export function redactUrl (url: string): string {
  const q = url.indexOf('?')
  if (q < 0) return redactText(url)
  const hash = url.indexOf('#', q)
  const query = url.slice(q + 1, hash < 0 ? undefined : hash)
  const parts = query.split('&').map(pair => {
    const eq = pair.indexOf('=')
    const rawName = eq < 0 ? pair : pair.slice(0, eq)
    let name = rawName
    try { name = decodeURIComponent(rawName.replace(/\+/g, ' ')) } catch {}
    if (eq >= 0 && SECRET_PARAM_SET.has(name.toLowerCase())) return `${rawName}=${REDACTED}`
    return pair
  })
  return redactText(`${url.slice(0, q)}?${parts.join('&')}`)
}

interface RequestLike { method?: string, url?: string, host?: string, ip?: string, socket?: { remotePort?: number } }

/** Fastify's `req` serializer, with the URL redacted. */
export function requestSerializer (req: RequestLike): Record<string, unknown> {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : req.url,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort
  }
}

const MAX_DEPTH = 6

/** A log object with every string redacted (pino `formatters.log`); objects without secrets come back as is. */
export function redactLogObject<T> (value: T, depth = 0): T {
  if (typeof value === 'string') return redactText(value) as T
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value
  if (value instanceof Error) {
    const message = redactText(value.message)
    const stack = value.stack === undefined ? undefined : redactText(value.stack)
    if (message === value.message && stack === value.stack) return value
    const copy = Object.create(Object.getPrototypeOf(value)) as Error
    Object.assign(copy, value)
    Object.defineProperty(copy, 'message', { value: message, enumerable: false, writable: true, configurable: true })
    Object.defineProperty(copy, 'stack', { value: stack, enumerable: false, writable: true, configurable: true })
    return copy as T
  }
  if (Array.isArray(value)) {
    let changed = false
    const out = value.map(v => { const r = redactLogObject(v, depth + 1); if (r !== v) changed = true; return r })
    return (changed ? out : value) as T
  }
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value
  let out: Record<string, unknown> | null = null
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const r = redactLogObject(v, depth + 1)
    if (r !== v) { out ??= { ...(value as Record<string, unknown>) }; out[k] = r }
  }
  return (out ?? value) as T
}
