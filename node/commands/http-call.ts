// One HTTP call of a CLI command to a node's API: JSON on stdout; an API error prints its problem
// (code, detail, field errors) on stderr and exits 1; an unreachable node exits 1 too.
import type { Command } from 'commander'
import { hostPort, networkCode } from '../transfers/reach.ts'

export const DEFAULT_API = 'http://127.0.0.1:8000'
export const REQUEST_TIMEOUT_MS = 15_000 // 15 s

export async function printApiCall (cmd: Command, what: string, url: URL, method: string, key: string | undefined, body?: unknown): Promise<void> {
  let res: Response
  try {
    res = await fetch(url, {
      method,
      headers: {
        ...(key !== undefined && key !== '' ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' })
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    })
  } catch (err) {
    return cmd.error(`error: BWN_ERR_CLI_API_UNREACHABLE: cannot reach the API at ${hostPort(url)} (${networkCode(err) ?? (err as Error).message})`, { exitCode: 1, code: `bwnet.${what}.unreachable` })
  }
  const text = await res.text()
  if (!res.ok) {
    let detail = text
    try {
      const problem = JSON.parse(text) as { code?: string, detail?: string, errors?: Array<{ field: string, message: string }> }
      detail = `${problem.code ?? res.status}: ${problem.detail ?? ''}${problem.errors ? ' ' + problem.errors.map(e => `${e.field} ${e.message}`).join('; ') : ''}`
    } catch {}
    return cmd.error(`error: ${res.status} ${detail}`, { exitCode: 1, code: `bwnet.${what}.api` })
  }
  cmd.configureOutput().writeOut!(JSON.stringify(text === '' ? null : JSON.parse(text), null, 2) + '\n')
}
