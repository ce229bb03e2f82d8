// Store over any abstract-level database (classic-level on disk, memory-level in tests and the
// simulator): one sublevel per table, JSON values, atomic batches across tables.
import type { AbstractLevel, AbstractSublevel } from 'abstract-level'
import type { Store, Table, TableName, StoreOp, RangeOptions } from './ports.ts'

type Db = AbstractLevel<string | Uint8Array, string, string>
type Sub = AbstractSublevel<Db, string | Uint8Array, string, unknown>

export class LevelStore implements Store {
  readonly #db: Db
  readonly #subs = new Map<TableName, Sub>()

  constructor (db: Db) {
    this.#db = db
  }

  #sub (name: TableName): Sub {
    let sub = this.#subs.get(name)
    if (sub === undefined) {
      sub = this.#db.sublevel<string, unknown>(name, { valueEncoding: 'json' }) as unknown as Sub
      this.#subs.set(name, sub)
    }
    return sub
  }

  table<V> (name: TableName): Table<V> {
    const sub = this.#sub(name)
    return {
      get: async (key) => (await sub.get(key)) as V | undefined,
      put: async (key, value) => { await sub.put(key, value) },
      del: async (key) => { await sub.del(key) },
      entries: (range: RangeOptions = {}) => sub.iterator(range) as unknown as AsyncIterable<[string, V]>
    }
  }

  /**
   * Closes and reopens the database and every table on it (a closed database closes its sublevels,
   * and opening it again does not reopen them). LevelDB needs this after a failed compaction: it
   * refuses every later write until reopened (node/storage.ts).
   */
  async reopen (): Promise<void> {
    await this.#db.close()
    await this.#db.open()
    await Promise.all([...this.#subs.values()].map(async sub => { await sub.open() }))
  }

  async batch (ops: StoreOp[], opts: { sync?: boolean } = {}): Promise<void> {
    if (ops.length === 0) return
    await this.#db.batch((ops.map(op => op.type === 'put'
      ? { type: 'put' as const, key: op.key, value: op.value, sublevel: this.#sub(op.table) as never }
      : { type: 'del' as const, key: op.key, sublevel: this.#sub(op.table) as never })) as never, { sync: opts.sync === true } as never) // classic-level's option; abstract-level's types omit it
  }
}

/**
 * Writes, once per store, an index key (in the `index` table, value 1) for every row of `table` stored
 * before the index existed, 1,000 to a batch, then sets `marker` in `meta` (synced). Once the marker is
 * set it returns at once: every later row's key is written with the row itself (a put of a key already
 * there changes nothing, so rows written meanwhile are safe either way).
 */
export async function backfillIndex<V> (store: Store, marker: string, table: TableName, keyOf: (row: V) => string): Promise<void> {
  if (await store.table('meta').get(marker) !== undefined) return
  let ops: StoreOp[] = []
  for await (const [, row] of store.table<V>(table).entries()) {
    ops.push({ type: 'put', table: 'index', key: keyOf(row), value: 1 })
    if (ops.length >= 1000) { await store.batch(ops); ops = [] }
  }
  await store.batch([...ops, { type: 'put', table: 'meta', key: marker, value: 1 }], { sync: true })
}

/** Collects a range into an array (tables are small per key prefix; use `limit` otherwise). */
export async function collect<V> (table: Table<V>, range?: RangeOptions): Promise<Array<[string, V]>> {
  const out: Array<[string, V]> = []
  for await (const entry of table.entries(range)) out.push(entry)
  return out
}

/** Range that selects every key starting with `prefix`. */
export function prefixRange (prefix: string): RangeOptions {
  return { gte: prefix, lt: prefix + '\xff' }
}
