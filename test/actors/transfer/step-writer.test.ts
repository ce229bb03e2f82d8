// The coordinator's group commit: steps' rows written in order, many steps per batch once one is in
// flight, each step's effects only once its rows (and every row before them) are durable, and a failed
// write refusing its batch and everything queued behind it.
import t from 'tap'
import { StepWriter } from '../../../actors/transfer/step-writer.ts'
import type { Store, StoreOp } from '../../../actors/ports.ts'

/** A store whose batches complete only when the test says so. */
function heldStore (): { store: Store, batches: StoreOp[][], synced: boolean[], release: (err?: Error) => void } {
  const batches: StoreOp[][] = []
  const synced: boolean[] = []
  const waiting: Array<{ resolve: () => void, reject: (e: Error) => void }> = []
  const store: Store = {
    table: () => { throw new Error('not read here') },
    batch: async (ops, opts) => {
      batches.push(ops)
      synced.push(opts?.sync === true)
      await new Promise<void>((resolve, reject) => { waiting.push({ resolve, reject }) })
    }
  }
  const release = (err?: Error): void => {
    const w = waiting.shift()
    if (w === undefined) throw new Error('no batch in flight')
    if (err === undefined) w.resolve(); else w.reject(err)
  }
  return { store, batches, synced, release }
}

const put = (key: string): StoreOp => ({ type: 'put', table: 'transfers', key, value: { key } })
const turn = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

t.test('the first step goes at once; the steps that arrive meanwhile share the next batch', async t => {
  const { store, batches, release } = heldStore()
  const failures: Error[] = []
  const w = new StepWriter(store, e => failures.push(e), e => { throw e })
  const done: string[] = []
  w.write([put('a')], err => { done.push(`a:${String(err)}`) })
  w.write([put('b')], err => { done.push(`b:${String(err)}`) })
  w.write([put('c'), put('d')], err => { done.push(`c:${String(err)}`) })
  t.equal(batches.length, 1, 'one batch in flight')
  t.same(batches[0]!.map(o => o.key), ['a'], 'holding the first step alone')
  t.equal(w.pending, 3)
  await turn()
  t.same(done, [], 'nothing runs before its batch is written')
  release(); await turn()
  t.same(done, ['a:null'], 'the first step runs once its batch is written')
  t.equal(batches.length, 2, 'the next batch goes as the first ends')
  t.same(batches[1]!.map(o => o.key), ['b', 'c', 'd'], 'with every step queued meanwhile, in order')
  release(); await turn()
  t.same(done, ['a:null', 'b:null', 'c:null'], 'then those steps, in order')
  t.equal(w.pending, 0)
  t.same(failures, [])
})

t.test('a step without rows runs at once when nothing is queued, and after the queued steps otherwise', async t => {
  const { store, batches, release } = heldStore()
  const w = new StepWriter(store, () => {}, e => { throw e })
  const done: string[] = []
  w.write([], () => { done.push('idle') })
  t.same(done, ['idle'], 'ran synchronously')
  t.equal(batches.length, 0, 'and wrote nothing')
  w.write([put('a')], () => { done.push('a') })
  w.write([], () => { done.push('after-a') })
  t.same(done, ['idle'], 'a step without rows waits for the rows before it')
  release(); await turn()
  t.same(done, ['idle', 'a', 'after-a'], 'then runs right after them')
  t.equal(batches.length, 1, 'with no batch of its own')
})

t.test('idle() resolves once every queued step is written', async t => {
  const { store, release } = heldStore()
  const w = new StepWriter(store, () => {}, e => { throw e })
  await w.idle()
  t.pass('idle at once when nothing is queued')
  w.write([put('a')], () => {})
  w.write([put('b')], () => {})
  let idle = false
  const waited = w.idle().then(() => { idle = true })
  release(); await turn()
  t.notOk(idle, 'not after the first batch while the second is queued')
  release(); await waited
  t.ok(idle, 'after the last')
})

t.test('a failed write refuses its batch and every step queued behind it, and the writer until reset', async t => {
  const { store, batches, release } = heldStore()
  const failures: Error[] = []
  const w = new StepWriter(store, e => failures.push(e), e => { throw e })
  const done: string[] = []
  const note = (name: string) => (err: Error | null): void => { done.push(`${name}:${err?.message ?? 'ok'}`) }
  w.write([put('a')], note('a'))
  release(); await turn()
  w.write([put('b')], note('b'))
  w.write([put('c')], note('c'))
  release(new Error('disk gone')); await turn()
  t.same(done, ['a:ok', 'b:disk gone', 'c:disk gone'], 'the failed batch and the step queued behind it are refused')
  w.write([put('d')], note('d'))
  t.same(done.at(-1), 'd:disk gone', 'a step after the failure is refused at once')
  t.same(failures.map(e => e.message), ['disk gone'], 'the coordinator is told once')
  t.equal(w.failed?.message, 'disk gone')
  t.equal(batches.length, 2, 'nothing more was written')
  w.reset()
  t.equal(w.failed, null)
  w.write([put('e')], note('e'))
  t.same(batches[2]!.map(o => o.key), ['e'], 'after reset, steps are written again')
  release(); await turn()
  t.same(done.at(-1), 'e:ok')
})

t.test('a failure refuses the steps queued behind the failed batch too', async t => {
  const { store, release } = heldStore()
  const w = new StepWriter(store, () => {}, e => { throw e })
  const done: string[] = []
  w.write([put('a')], err => { done.push(`a:${err?.message ?? 'ok'}`) })
  w.write([put('b')], err => { done.push(`b:${err?.message ?? 'ok'}`) })
  w.write([], err => { done.push(`c:${err?.message ?? 'ok'}`) })
  release(new Error('EIO')); await turn()
  t.same(done, ['a:EIO', 'b:EIO', 'c:EIO'], 'none of them happened')
  await w.idle()
  t.equal(w.pending, 0, 'and the writer is idle')
})

t.test('a step whose effects throw does not keep the next steps from running', async t => {
  const { store, release } = heldStore()
  const thrown: unknown[] = []
  const w = new StepWriter(store, () => {}, e => thrown.push(e))
  const done: string[] = []
  w.write([put('a')], () => { done.push('a') })
  w.write([put('b')], () => { throw new Error('consumer broke') })
  w.write([put('c')], () => { done.push('c') })
  release(); await turn(); release(); await turn()
  t.same(done, ['a', 'c'], 'the step after it ran')
  t.same(thrown.map(e => (e as Error).message), ['consumer broke'], 'and the throw was reported')
})

t.test('a batch is flushed to disk when any step in it asks (what a client is told is stored)', async t => {
  const { store, batches, synced, release } = heldStore()
  const w = new StepWriter(store, () => {}, e => { throw e })
  w.write([put('a')], () => {})
  w.write([put('b')], () => {})
  w.write([put('c')], () => {}, true)
  release(); await turn()
  w.write([put('d')], () => {})
  release(); await turn()
  release(); await turn()
  t.same(batches.map(b => b.map(o => o.key)), [['a'], ['b', 'c'], ['d']])
  t.same(synced, [false, true, false], 'the batch holding the synced step only')
})
