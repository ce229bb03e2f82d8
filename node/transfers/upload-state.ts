// The sender's resume record for one file: which transfer it belongs to and which chunks the API has
// acknowledged. `bwnet transfer put` run again for the same file (same size and mtime) against the
// same API resumes that transfer and sends only the chunks not listed here (docs/cli.md#resume).
//
// Where: `$BWN_STATE_DIR/<sha256 of the absolute path>.json`, default `~/.bwnet/transfers/`, so the
// file's own directory is never written to (it may be read-only or shared).
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

export const STATE_VERSION = 1

export interface UploadState {
  version: typeof STATE_VERSION
  file: string
  size: number
  mtime_ms: number
  api: string
  transfer_id: string
  destination_id: string | null
  tier: string
  sender_hotkey: string
  chunk_size: number
  total_chunks: number
  /** Indices the API acknowledged (201 created or 200 duplicate), ascending. */
  acked: number[]
}

export function defaultStateDir (env: NodeJS.ProcessEnv = process.env): string {
  return env.BWN_STATE_DIR !== undefined && env.BWN_STATE_DIR !== '' ? env.BWN_STATE_DIR : join(homedir(), '.bwnet', 'transfers')
}

/** The state file for `file` under `dir`: named by the sha256 of the file's absolute path. */
export function statePathFor (file: string, dir = defaultStateDir()): string {
  return join(dir, `${createHash('sha256').update(resolve(file)).digest('hex')}.json`)
}

/** The stored state, or null when there is none or it cannot be read (a fresh start is always safe). */
export async function readState (path: string): Promise<UploadState | null> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as UploadState
    if (parsed.version !== STATE_VERSION || typeof parsed.transfer_id !== 'string' || !Array.isArray(parsed.acked)) return null
    return parsed
  } catch {
    return null
  }
}

/** Whether `state` describes this very upload: same file bytes (size + mtime), API and choices. */
export function stateMatches (state: UploadState, want: { file: string, size: number, mtimeMs: number, api: string, destinationId: string | null, tier: string }): boolean {
  return state.file === resolve(want.file) && state.size === want.size && state.mtime_ms === want.mtimeMs &&
    state.api === want.api && state.destination_id === want.destinationId && state.tier === want.tier
}

/** Serialises writes of one state file; each write replaces the file atomically (tmp + rename). */
export class StateWriter {
  readonly path: string
  readonly state: UploadState
  #chain: Promise<void> = Promise.resolve()
  readonly acked: Set<number>

  constructor (path: string, state: UploadState) {
    this.path = path
    this.state = state
    this.acked = new Set(state.acked)
  }

  ack (index: number): Promise<void> {
    this.acked.add(index)
    return this.flush()
  }

  flush (): Promise<void> {
    this.#chain = this.#chain.then(async () => {
      const body: UploadState = { ...this.state, acked: [...this.acked].sort((a, b) => a - b) }
      await mkdir(dirname(this.path), { recursive: true })
      const tmp = `${this.path}.${randomBytes(4).toString('hex')}.tmp`
      await writeFile(tmp, JSON.stringify(body) + '\n', { mode: 0o600 })
      await rename(tmp, this.path)
    })
    return this.#chain
  }
}
