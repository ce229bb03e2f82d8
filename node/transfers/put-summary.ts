// What one `bwnet transfer put` of one file reports at its end (the JSON summary line, docs/cli.md#output).
// A type only: node/errors.ts (GaveUp carries one) and the CLI's put both use it.
import type { TransferRecord } from '../../api/transfers.ts'

export interface PutSummary {
  event: 'transfer_put'
  transfer_id: string
  status: TransferRecord['status'] | 'stopped' | 'interrupted'
  resumed: boolean
  chunks_total: number
  chunks_uploaded: number
  chunks_created: number
  chunks_duplicate: number
  chunks_skipped: number
  bytes_uploaded: number
  retries: number
  rate_limited: number
  upload_ms: number
  elapsed_ms: number
  state_file: string | null
  /** The whole file's sha256 (hex); null for a stdin put that did not send every byte. */
  sha256: string | null
  /** The name (or relative path) the transfer was created with. */
  filename: string
  error: { code: string, message: string } | null
}
