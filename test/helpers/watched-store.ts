// A store whose one table is watched: its reads by key recorded, its full scans counted, and refused
// while `strict` (a listing that must read an index, not the whole table).
import type { Store, Table, TableName } from '../../actors/ports.ts'

export function watchedTable (store: Store, name: TableName): { store: Store, read: string[], scans: () => number, strict: { on: boolean } } {
  const read: string[] = []
  let scans = 0
  const strict = { on: false }
  return {
    read,
    scans: () => scans,
    strict,
    store: {
      ...store,
      batch: store.batch.bind(store),
      table<V> (table: TableName): Table<V> {
        const inner = store.table<V>(table)
        if (table !== name) return inner
        return {
          ...inner,
          get: async (key) => { read.push(key); return await inner.get(key) },
          entries: (range) => {
            scans++
            if (strict.on) throw new Error(`a full scan of ${name}`)
            return inner.entries(range)
          }
        }
      }
    }
  }
}
