// A LevelStore on memory whose batch writes can be held (a slow disk), failed, and watched, and the
// ledger as stored: for the credit ledger's commit, journal and reconciliation tests.
import { MemoryLevel } from 'memory-level'
import { collect, LevelStore } from '../../actors/store.ts'
import type { StoreOp } from '../../actors/ports.ts'

/** A store whose batch writes can be held (a slow disk), failed, lost with a crash, and watched. */
export function gatedStore () {
  const store = new LevelStore(new MemoryLevel() as never)
  const write = store.batch.bind(store)
  let gate: Promise<void> | null = null
  let open: () => void = () => {}
  let failNext: Error | null = null
  const writes: StoreOp[][] = []
  const watchers: Array<() => void> = []
  const lost = new Set<Promise<void>>()
  store.batch = async (ops: StoreOp[]) => {
    writes.push(ops)
    for (const w of watchers.splice(0)) w()
    const held = gate
    if (held !== null) {
      await held
      if (lost.has(held)) return new Promise<void>(() => {}) // the process died with it in flight: never written
    }
    if (failNext !== null) { const err = failNext; failNext = null; throw err }
    await write(ops)
  }
  return {
    store,
    writes,
    hold () { gate = new Promise(resolve => { open = resolve }) },
    release () { gate = null; open() },
    /** The writes held now are lost, as in a process that died with them in flight; later ones go through. */
    crash () { if (gate !== null) lost.add(gate); gate = null; open() },
    failNextWrite (err: Error) { failNext = err },
    /** Resolves when the next batch write starts. */
    nextWrite: () => new Promise<void>(resolve => watchers.push(resolve))
  }
}


export interface StoredLedgerEntry { seq: number, amount: number, balanceAfter: number, kind: string }

/** An organization's stored ledger entries, runs of reads expanded, oldest first: what a restarted node would list. */
export async function storedLedger (store: LevelStore, organizationId: string): Promise<StoredLedgerEntry[]> {
  const out: StoredLedgerEntry[] = []
  for (const [, row] of await collect(store.table<StoredLedgerEntry & { reads?: number }>('credit_ledger'), { gte: `entry/${organizationId}/`, lt: `entry/${organizationId}/\xff` })) {
    const reads = row.reads ?? 1
    for (let i = reads - 1; i >= 0; i--) out.push({ seq: row.seq - i, amount: row.amount, balanceAfter: row.balanceAfter - row.amount * i, kind: row.kind })
  }
  return out
}
