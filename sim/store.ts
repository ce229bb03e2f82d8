// A synchronous in-memory Store for the simulator. memory-level works, but with 200,000 tasks its
// encoding layers and per-operation promise chains dominate a run; this keeps one sorted B+ tree per
// table and answers with already-settled promises.
//
// Rows are kept as the objects the actors hand over, not copied: the actors write a row and read it
// back only when they no longer hold it in memory (a transfer's row after it left the coordinator's
// state, a worker session, an offer batch they replace with a new object), so no reader sees a
// mutation it should not. This halves the CPU and the memory per row against JSON text.
//
// Finished transfers leave memory: once a terminal transfer's cleanup is done (its row is written
// terminal without `cleanup_pending`), its row and every row keyed `<transferId>/…` leave every
// simulated store that holds one (`FinishedTransfers`). What the engine needs of them afterwards
// (the invariants, the metrics) it took from the coordinator's events.
import BTreeModule from 'sorted-btree'
import type { Store, Table, TableName, StoreOp, RangeOptions } from '../actors/ports.ts'
import { TERMINAL, keys, type TransferRow } from '../actors/transfer/model.ts'

type BTreeClass = typeof import('sorted-btree').default
type Tree = import('sorted-btree').default<string, unknown>
// sorted-btree is CommonJS with `exports.default`: under NodeNext the class sits on `.default`.
const BTree = ((BTreeModule as unknown as { default?: BTreeClass }).default ?? BTreeModule) as unknown as BTreeClass

/** Tables whose keys start with `<transferId>/` (actors/transfer/model.ts `keys`). */
export const TRANSFER_TABLES: readonly TableName[] = ['chunks', 'tasks', 'task_attempts', 'task_results', 'transfer_assignment_plans', 'overseer_interventions', 'task_offer_batches']
const transferKeyed = new Set<TableName>(TRANSFER_TABLES)
/** Where the organization index keys of transfers start (keys.orgTransfer). */
const ORG_TRANSFERS = keys.orgTransfers(null).slice(0, keys.orgTransfers(null).indexOf('/') + 1)

/** Which stores hold rows of which transfer, so a finished transfer's rows leave all of them. */
export class FinishedTransfers {
  readonly #holders = new Map<string, SimStore[]>()
  /** Transfers whose rows left memory. */
  released = 0

  note (transferId: string, store: SimStore): void {
    const h = this.#holders.get(transferId)
    if (h === undefined) this.#holders.set(transferId, [store])
    else if (!h.includes(store)) h.push(store)
  }

  release (transferId: string): void {
    const h = this.#holders.get(transferId)
    if (h === undefined) return
    this.#holders.delete(transferId)
    for (const s of h) s.purge(transferId)
    this.released++
  }

  /** Transfers with rows in memory now. */
  get holding (): number { return this.#holders.size }
}

export class SimStore implements Store {
  readonly #finished: FinishedTransfers | undefined
  readonly #tables = new Map<TableName, Tree>()
  readonly #handles = new Map<TableName, Table<unknown>>()
  /** Each transfer's organization index key (`index` table, keys.orgTransfer), dropped with its rows. */
  readonly #orgKeys = new Map<string, string>()
  /** Rows written over the run (puts), for the report. */
  writes = 0

  constructor (finished?: FinishedTransfers) { this.#finished = finished }

  #tree (name: TableName): Tree {
    let t = this.#tables.get(name)
    if (t === undefined) { t = new BTree<string, unknown>(); this.#tables.set(name, t) }
    return t
  }

  table<V> (name: TableName): Table<V> {
    let handle = this.#handles.get(name)
    if (handle === undefined) { handle = this.#handle(name); this.#handles.set(name, handle) }
    return handle as Table<V>
  }

  #put (name: TableName, tree: Tree, key: string, value: unknown): void {
    this.writes++
    const f = this.#finished
    if (f !== undefined) {
      if (name === 'transfers') {
        const row = value as TransferRow
        f.note(key, this)
        if (TERMINAL.has(row.status) && row.cleanup_pending !== true) { f.release(key); return }
      } else if (name === 'index' && key.startsWith(ORG_TRANSFERS)) {
        this.#orgKeys.set(key.slice(key.lastIndexOf('/') + 1), key)
      } else if (transferKeyed.has(name)) {
        const slash = key.indexOf('/')
        if (slash > 0) f.note(key.slice(0, slash), this)
      }
    }
    tree.set(key, value)
  }

  #handle<V> (name: TableName): Table<V> {
    const tree = this.#tree(name)
    return {
      get: async (key) => tree.get(key) as V | undefined,
      put: async (key, value) => { this.#put(name, tree, key, value) },
      del: async (key) => { tree.delete(key) },
      entries: (range: RangeOptions = {}) => rangeOf<V>(tree, range)
    }
  }

  async batch (ops: StoreOp[], _opts?: { sync?: boolean }): Promise<void> {
    for (const op of ops) {
      const tree = this.#tree(op.table)
      if (op.type === 'put') this.#put(op.table, tree, op.key, op.value)
      else tree.delete(op.key)
    }
  }

  /** Drops a transfer's row and every row keyed `<transferId>/…` (FinishedTransfers). */
  purge (transferId: string): void {
    this.#tables.get('transfers')?.delete(transferId)
    const orgKey = this.#orgKeys.get(transferId)
    if (orgKey !== undefined) { this.#tables.get('index')?.delete(orgKey); this.#orgKeys.delete(transferId) }
    const low = `${transferId}/`
    const high = `${transferId}0` // '0' follows '/' in code-unit order
    for (const name of TRANSFER_TABLES) {
      const tree = this.#tables.get(name)
      if (tree === undefined) continue
      const doomed: string[] = []
      tree.forRange(low, high, false, (k) => { doomed.push(k) })
      for (const k of doomed) tree.delete(k)
    }
  }

  /** Rows in one table (synchronous, for the engine's end-of-run checks). */
  rows<V> (name: TableName): Array<[string, V]> {
    return [...this.#tree(name).entries()] as Array<[string, V]>
  }

  size (name: TableName): number { return this.#tree(name).size }
}

/** The rows of a range, read at once (as a snapshot), handed out by a plain async iterator (no generator). */
function rangeOf<V> (tree: Tree, range: RangeOptions): AsyncIterable<[string, V]> {
  return {
    [Symbol.asyncIterator]: () => {
      let rows: Array<[string, V]> | null = null
      let i = 0
      return {
        next: async (): Promise<IteratorResult<[string, V]>> => {
          rows ??= rowsOf<V>(tree, range)
          return i < rows.length ? { value: rows[i++]!, done: false } : { value: undefined, done: true }
        }
      }
    }
  }
}

function rowsOf<V> (tree: Tree, range: RangeOptions): Array<[string, V]> {
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
      if (inRange(k)) out.push([k, v as V])
    }
  } else {
    const low = range.gte ?? range.gt
    for (const [k, v] of tree.entries(low)) {
      if (out.length >= limit) break
      if (range.lt !== undefined && k >= range.lt) break
      if (range.lte !== undefined && k > range.lte) break
      if (inRange(k)) out.push([k, v as V])
    }
  }
  return out
}
