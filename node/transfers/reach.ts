// Reading a failed connection: the system error under `fetch failed`, whether it says nothing listens at
// the address (a first contact not worth retrying), and the address as host:port for messages.

/**
 * Connection errors that say nothing listens at the address (as opposed to a reset or a timeout), and
 * ERR_BAD_PORT: a port fetch never connects to (1, 9, 25, … in the Fetch standard's list).
 */
const NOTHING_THERE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ERR_BAD_PORT'])

/** The system error code under a failed fetch (`TypeError: fetch failed` → cause → code), or null. */
export function networkCode (err: unknown): string | null {
  for (let e: unknown = err, depth = 0; e !== null && e !== undefined && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string') return code
    if ((e as { message?: unknown }).message === 'bad port') return 'ERR_BAD_PORT'
    // undici reports a failed connect to a host with several addresses as an AggregateError.
    const inner = (e as { errors?: unknown[] }).errors?.[0]
    if (inner !== undefined) { const c = networkCode(inner); if (c !== null) return c }
  }
  return null
}

/** Whether a failed request's error says nothing listens at the address (not worth a retry on first contact). */
export function nothingThere (err: unknown): boolean {
  const code = networkCode(err)
  return code !== null && NOTHING_THERE.has(code)
}

/** `host:port` of a URL, the port spelled out even when it is the scheme's default. */
export function hostPort (url: URL | string): string {
  const u = typeof url === 'string' ? new URL(url) : url
  return `${u.hostname}:${u.port !== '' ? u.port : u.protocol === 'https:' ? '443' : '80'}`
}
