// Scans HTTP responses for what must never leave a node in telemetry or audit answers: destination
// credentials, presigned/signed URLs, object paths, signatures, display names and worker timing claims.
export interface ScannedResponse { url: string, statusCode: number, body: string, headers?: Record<string, unknown> }
export interface Finding { url: string, what: string, excerpt: string }

/** Patterns that are secret wherever they appear, whatever the run. */
export const GENERIC_SECRET_PATTERNS: Array<[string, RegExp]> = [
  ['a URL', /[a-z][a-z0-9+.-]*:\/\/[^\s"]+/i],
  ['an S3 presigned-URL parameter', /X-Amz-(Signature|Credential|Security-Token)/i],
  ['a URL signature parameter', /[?&](sig|signature|token)=/i],
  ['a worker-claimed duration field', /"(duration_ms|durationMs)"\s*:/],
  ['a transfer display name field', /"transfer_name"\s*:\s*"|"metadata"\s*:\s*\{[^}]*"name"\s*:/]
]

/**
 * Every place a response body or header holds one of `secrets` (exact strings of the run: credentials,
 * object paths, names, signatures) or a generic secret pattern.
 */
export function scanForSecrets (responses: readonly ScannedResponse[], secrets: readonly string[], patterns = GENERIC_SECRET_PATTERNS): Finding[] {
  const findings: Finding[] = []
  for (const r of responses) {
    const text = `${r.body}\n${JSON.stringify(r.headers ?? {})}`
    for (const s of secrets) {
      // A number is found as a number: 7777777 is not a leak inside 7.2817777777777 (a measured rate).
      const at = /^[0-9]+$/.test(s) ? (new RegExp(`(?<![0-9.])${s}(?![0-9.])`).exec(text)?.index ?? -1) : text.indexOf(s)
      if (s.length > 0 && at >= 0) findings.push({ url: r.url, what: `secret ${JSON.stringify(s)}`, excerpt: text.slice(Math.max(0, at - 60), at + s.length + 60) })
    }
    for (const [what, re] of patterns) {
      const m = re.exec(r.body)
      if (m !== null) findings.push({ url: r.url, what, excerpt: r.body.slice(Math.max(0, m.index - 60), m.index + m[0].length + 60) })
    }
  }
  return findings
}
