// Telemetry that survives a restart: every entry that changes the projection (events with the pool
// they were scored in, participant updates, publications, prunes, live-version cuts) is appended to
// the `telemetry` table in order; on start the entries are replayed into a fresh projection, which
// rebuilds the same published network snapshots and task evidence, the same snapshot ids and
// sequences (so list cursors stay valid: their HMAC key is in the meta table) and the live versions
// still inside their 10-minute window. Writes are batched: entries appended while a batch is being
// written go in the next one, in order. docs/telemetry.md#persistence.
import type { Store, StoreOp, Logger } from '../ports.ts'
import type { JournalEntry, TelemetryProjection } from './projection.ts'

export const JOURNAL_PREFIX = 'journal/'
const SEQ_DIGITS = 12

const keyOf = (seq: number): string => `${JOURNAL_PREFIX}${String(seq).padStart(SEQ_DIGITS, '0')}`

export class TelemetryJournal {
  readonly #store: Store
  readonly #log: Pick<Logger, 'error'>
  #seq: number
  #pending: StoreOp[] = []
  #writing: Promise<void> | null = null

  constructor (store: Store, lastSeq: number, log: Pick<Logger, 'error'>) {
    this.#store = store
    this.#seq = lastSeq
    this.#log = log
  }

  get seq (): number { return this.#seq }

  append (entry: JournalEntry): void {
    this.#seq++
    this.#pending.push({ type: 'put', table: 'telemetry', key: keyOf(this.#seq), value: entry })
    this.#writing ??= this.#drain()
  }

  /** Resolves once every entry appended so far is written. */
  async flush (): Promise<void> {
    while (this.#writing !== null) await this.#writing
  }

  async #drain (): Promise<void> {
    await Promise.resolve() // entries appended in the same turn share one batch
    try {
      while (this.#pending.length > 0) {
        const ops = this.#pending
        this.#pending = []
        await this.#store.batch(ops)
      }
    } catch (err) {
      this.#log.error({ err, event: 'telemetry_journal_failed' }, 'telemetry journal write failed')
    } finally {
      this.#writing = null
    }
  }
}

/**
 * Replays the journal into `projection` (which must be fresh) and returns the journal it should
 * write to from now on. Entries are read in order, streamed.
 */
export async function restoreProjection (store: Store, projection: TelemetryProjection, log: Pick<Logger, 'error'>): Promise<{ journal: TelemetryJournal, replayed: number }> {
  let last = 0
  let replayed = 0
  for await (const [key, entry] of store.table<JournalEntry>('telemetry').entries({ gte: JOURNAL_PREFIX, lt: `${JOURNAL_PREFIX}\xff` })) {
    projection.replay(entry)
    last = Number(key.slice(JOURNAL_PREFIX.length))
    replayed++
  }
  const journal = new TelemetryJournal(store, last, log)
  projection.journal = (e) => journal.append(e)
  return { journal, replayed }
}
