// A synchronous in-memory Store for the simulator. memory-level works, but with 200,000 tasks its
// encoding layers and per-operation promise chains dominate a run; this keeps one sorted B+ tree per
// table and answers with already-settled promises. Values are kept as JSON text, as level's json
// encoding does: a later mutation by the caller never changes what was stored, and a row costs about
// half the memory of the object (measured: ~3.3 KB of rows per simulated task).
import BTreeModule from 'sorted-btree'
import type { Store, Table, TableName, StoreOp, RangeOptions } from '../actors/ports.ts'

type BTreeClass = typeof import('sorted-btree').default
type Tree = import('sorted-btree').default<string, string>
// sorted-btree is CommonJS with `exports.default`: under NodeNext the class sits on `.default`.
const BTree = ((BTreeModule as unknown as { default?: BTreeClass }).default ?? BTreeModule) as unknown as BTreeClass

const encode = (value: unknown): string => JSON.stringify(value) ?? 'null'
const decode = <V>(text: string | undefined): V | undefined => (text === undefined ? undefined : JSON.parse(text) as V)

export class SimStore implements Store {
  readonly #tables = new Map<TableName, Tree>()
  readonly #handles = new Map<TableName, Table<unknown>>()
  /** Rows written over the run (puts), for the report. */
  writes = 0

  #tree (name: TableName): Tree {
    let t = this.#tables.get(name)
    if (t === undefined) { t = new BTree<string, string>(); this.#tables.set(name, t) }
    return t
  }

  table<V> (name: TableName): Table<V> {
    let handle = this.#handles.get(name)
    if (handle === undefined) { handle = this.#handle(name); this.#handles.set(name, handle) }
    return handle as Table<V>
  }

  #handle<V> (name: TableName): Table<V> {
    const tree = this.#tree(name)
    return {
      get: async (key) => decode<V>(tree.get(key)),
      put: async (key, value) => { this.writes++; tree.set(key, encode(value)) },
      del: async (key) => { tree.delete(key) },
      entries: (range: RangeOptions = {}) => rangeOf<V>(tree, range)
    }
  }

  async batch (ops: StoreOp[]): Promise<void> {
    for (const op of ops) {
      const tree = this.#tree(op.table)
      if (op.type === 'put') { this.writes++; tree.set(op.key, encode(op.value)) } else tree.delete(op.key)
    }
  }

  /** Rows in one table (synchronous, for the engine's end-of-run checks). */
  rows<V> (name: TableName): Array<[string, V]> {
    return [...this.#tree(name).entries()].map(([k, v]) => [k, decode<V>(v)!])
  }

  size (name: TableName): number { return this.#tree(name).size }
}

async function * rangeOf<V> (tree: Tree, range: RangeOptions): AsyncIterable<[string, V]> {
  const limit = range.limit ?? Infinity
  const inRange = (k: string): boolean =>
    (range.gt === undefined || k > range.gt) && (range.gte === undefined || k >= range.gte) &&
    (range.lt === undefined || k < range.lt) && (range.lte === undefined || k <= range.lte)
  const out: Array<[string, V]> = []
  if (range.reverse === true) {
    const high = range.lte ?? range.lt
    for (const [k, v] of tree.entriesReversed(high)) {
      if (out.length >= limit) break
      if (range.gt !== undefined && k <= range.gt) break
      if (range.gte !== undefined && k < range.gte) break
      if (inRange(k)) out.push([k, decode<V>(v)!])
    }
  } else {
    const low = range.gte ?? range.gt
    for (const [k, v] of tree.entries(low)) {
      if (out.length >= limit) break
      if (range.lt !== undefined && k >= range.lt) break
      if (range.lte !== undefined && k > range.lte) break
      if (inRange(k)) out.push([k, decode<V>(v)!])
    }
  }
  yield * out
}
