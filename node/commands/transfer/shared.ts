// What the `bwnet transfer` subcommands share: limits, argument parsers, the output rule, ids.
import { InvalidArgumentError } from 'commander'
import { TransferApiClient, ApiProblem } from '../../transfers/api-client.ts'
import { parseRate } from '../../transfers/bwlimit.ts'
import { formatBytes, formatDuration } from '../../transfers/progress.ts'
import type { PutSummary } from '../../transfers/put-summary.ts'
import { UsageError } from '../common.ts'
import type { TransferRecord } from '../../../api/transfers.ts'

export const DEFAULT_PARALLEL = 4 // chunk uploads in flight, per file
export const MAX_PARALLEL = 64
export const DEFAULT_TRANSFERS = 4 // files in flight in a directory put (as rclone)
export const MAX_TRANSFERS = 16
export const DEFAULT_TIER = 'STANDARD'
export const DEFAULT_WAIT_TIMEOUT_S = 24 * 3600 // 1 day: how long `put` waits for completion
export const LIST_PAGE = 100
const PREFIX_SCAN_MAX = 2_000 // transfers scanned to resolve a short id
/** Exit code when `--max-chunks` stopped the upload before every chunk was sent. */
export const EXIT_STOPPED_EARLY = 3
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export type Status = TransferRecord['status']

export function positiveInt (max: number, min = 1) {
  return (value: string): number => {
    const n = Number(value)
    if (!/^[0-9]+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`an integer ${min}..${max}`)
    return n
  }
}

/** A repeatable option's values, in order. */
export function collect (value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value]
}

export function rateArg (value: string): number {
  const rate = parseRate(value)
  if (rate === null) throw new InvalidArgumentError('a rate in bytes per second, e.g. 512K, 10M, 1.5G')
  return rate
}

export const machineOutput = (opts: { json?: boolean }): boolean => opts.json === true || process.stdout.isTTY !== true

export function humanResult (s: PutSummary, label: string): string {
  const secs = s.elapsed_ms / 1000
  const rate = s.upload_ms > 0 ? `, upload ${formatBytes(s.bytes_uploaded / (s.upload_ms / 1000))}/s` : ''
  return `${s.status} ${s.transfer_id} ${label}${s.filename !== label && !label.endsWith(`/${s.filename}`) ? ` as ${s.filename}` : ''}: ${s.chunks_total} chunks (${s.chunks_uploaded} sent, ${s.chunks_skipped} already there) in ${formatDuration(secs * 1000)}${rate}${s.rate_limited > 0 ? `, rate limited ${s.rate_limited}×` : ''}${s.sha256 !== null ? `\nsha256 ${s.sha256}` : ''}`
}

export function table (rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map(r => r[c]!.length)))
  return rows.map(r => r.map((cell, c) => c === r.length - 1 ? cell : cell.padEnd(widths[c]!)).join('  ')).join('\n') + '\n'
}

/**
 * A transfer id as the user typed it: a full UUID as is; a hex prefix of 4+ characters is looked up
 * among the key's transfers (like a short git hash). Anything else, or no match, is not found.
 */
export async function resolveId (client: TransferApiClient, given: string): Promise<string> {
  const id = given.trim().toLowerCase()
  if (UUID.test(id)) return id
  const notFound = (): never => { throw new ApiProblem(404, 'BWN_ERR_TRANSFER_NOT_FOUND', `no transfer ${given} (ids are UUIDs; a prefix of 4 or more hex digits of one of your transfers works too)`) }
  if (!/^[0-9a-f][0-9a-f-]{3,35}$/.test(id)) return notFound()
  const matches: string[] = []
  for (let offset = 0; offset < PREFIX_SCAN_MAX; offset += LIST_PAGE) {
    const page = await client.list({ limit: LIST_PAGE, offset })
    for (const r of page.items) if (r.id.startsWith(id)) matches.push(r.id)
    if (page.items.length < LIST_PAGE || offset + LIST_PAGE >= page.total) break
  }
  if (matches.length === 1) return matches[0]!
  if (matches.length > 1) throw new UsageError(`${given} is ambiguous: ${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', …' : ''}`)
  return notFound()
}

/** An API 400 about the id itself (e.g. not a UUID) reads as what it is to the user: not found. */
export function asNotFound (err: unknown, given: string): unknown {
  if (err instanceof ApiProblem && err.status === 400 && /\bid\b/.test(JSON.stringify(err.body))) return new ApiProblem(404, 'BWN_ERR_TRANSFER_NOT_FOUND', `no transfer ${given}`)
  return err
}

export function humanRecord (r: TransferRecord): string {
  const lines = [
    `transfer ${r.id}: ${r.status}${r.error !== null ? ` (${r.error.code}: ${r.error.message})` : ''}`,
    `  name        ${r.transfer_name ?? r.metadata.name ?? '-'}`,
    // The destination gave it another name (the organization held that one already).
    // (An API from before the field has none.)
    ...(typeof r.stored_filename === 'string' && r.stored_filename !== (r.transfer_name ?? r.metadata.name) ? [`  stored as   ${r.stored_filename}`] : []),
    `  size        ${formatBytes(r.total_size)} in ${r.total_chunks} chunks of ${formatBytes(r.chunk_size)}`,
    `  chunks      received ${r.chunks.received}/${r.total_chunks}, delivered ${r.chunks.delivered}/${r.total_chunks}, verified ${r.chunks.verified}`,
    `  destination ${r.destination_id}`,
    `  created     ${r.created_at}${r.completed_at !== null ? `, completed ${r.completed_at}` : ''}`
  ]
  return lines.join('\n') + '\n'
}
