// The ledger's journal (docs/telemetry.md#charges-and-the-ledger): an append-only file beside the store
// where each commit of credit changes is written synchronously, on the main thread, before the reads it
// charges are answered. A paid read then waits for one write(2) in the same event-loop turn instead of a
// store batch on libuv's pool; the store gets the same changes right after, in batches of their own, and
// the journal is emptied once the store holds all of it. On start, commits the store does not hold yet
// are replayed into it.
//
// Durability is the store's own: LevelDB writes its log without fsync by default, so both survive the
// process (a crash, a kill) and neither an OS crash. Each line is `<crc32 of the JSON, 8 hex> <JSON>\n`;
// reading stops at the first line that is cut short or does not match its checksum (nothing after it
// was ever acknowledged: an append that fails is cut off the file before its commit is refused).
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, renameSync, writeSync } from 'node:fs'
import { crc32 } from 'node:zlib'
import type { StoreOp } from '../../actors/ports.ts'

/** One commit: its number (1, 2, … across the journal's life, kept in the store) and its store operations. */
export interface JournalRecord { n: number, ops: StoreOp[] }

export interface JournalContents {
  records: JournalRecord[]
  /** Bytes after the last whole record (a cut or damaged tail), ignored. */
  ignoredBytes: number
}

export interface LedgerJournalOptions {
  /**
   * What an append that failed throws: given the error (with the journal already put back), returns the
   * error to throw instead (a node answers a full disk with 507 and frees its ballast, node/storage.ts).
   */
  appendError?: (err: unknown) => unknown
}

export class LedgerJournal {
  readonly path: string
  readonly #appendError: (err: unknown) => unknown
  #fd: number | null
  #bytes: number

  constructor (path: string, opts: LedgerJournalOptions = {}) {
    this.path = path
    this.#appendError = opts.appendError ?? (err => err)
    this.#fd = openSync(path, 'a+', 0o600)
    this.#bytes = fstatSync(this.#fd).size
  }

  /** Bytes in the journal now. */
  get bytes (): number { return this.#bytes }

  /**
   * Writes one commit, or throws (the disk full, the file gone) with the journal as it was before: a
   * partial line is cut off, so a later record never follows a damaged one.
   */
  append (record: JournalRecord): void {
    const fd = this.#open()
    const json = JSON.stringify(record)
    const line = Buffer.from(`${crc32(json).toString(16).padStart(8, '0')} ${json}\n`)
    const before = this.#bytes
    try {
      for (let off = 0; off < line.byteLength;) off += writeSync(fd, line, off)
    } catch (err) {
      try {
        ftruncateSync(fd, before)
      } catch {
        // The file cannot be put back: refuse every later append rather than write after a damaged line.
        this.close()
      }
      throw this.#appendError(err)
    }
    this.#bytes = before + line.byteLength
  }

  /** Every whole record, oldest first. */
  read (): JournalContents {
    const fd = this.#open()
    const size = fstatSync(fd).size
    const buf = Buffer.allocUnsafe(size)
    for (let off = 0; off < size;) {
      const n = readSync(fd, buf, off, size - off, off)
      if (n === 0) break
      off += n
    }
    const records: JournalRecord[] = []
    let at = 0
    for (;;) {
      const end = buf.indexOf(0x0a, at)
      if (end < 0) break
      const line = buf.toString('utf8', at, end)
      const json = line.slice(9)
      if (line[8] !== ' ' || line.slice(0, 8) !== crc32(json).toString(16).padStart(8, '0')) break
      let record: JournalRecord
      try { record = JSON.parse(json) as JournalRecord } catch { break }
      if (!Number.isSafeInteger(record.n) || !Array.isArray(record.ops)) break
      records.push(record)
      at = end + 1
    }
    return { records, ignoredBytes: size - at }
  }

  /** Empties the journal: the store holds every record in it. */
  reset (): void {
    ftruncateSync(this.#open(), 0)
    this.#bytes = 0
  }

  /**
   * Moves the journal's file aside (to `<path>.<suffix>`) and starts an empty one: for records that do
   * not follow what the store holds, kept for the operator instead of replayed or lost.
   */
  setAside (suffix: string): string {
    const fd = this.#open()
    const aside = `${this.path}.${suffix}`
    renameSync(this.path, aside)
    this.#fd = openSync(this.path, 'a+', 0o600)
    this.#bytes = 0
    closeSync(fd)
    return aside
  }

  close (): void {
    if (this.#fd === null) return
    const fd = this.#fd
    this.#fd = null
    closeSync(fd)
  }

  #open (): number {
    if (this.#fd === null) throw Object.assign(new Error(`the ledger journal ${this.path} is closed`), { code: 'ERR_JOURNAL_CLOSED' })
    return this.#fd
  }
}
