// The client workload: transfers arrive (Poisson or evenly spaced) at a random orchestrator's API,
// upload their chunks a few at a time (each staged as soon as its bytes are in, as the CLI's uploads
// are) and finalize, through the same coordinator messages the HTTP service sends.
import { ask } from '../actors/runtime.ts'
import type { CoordinatorMsg, Outcome } from '../actors/transfer/coordinator.ts'
import type { TransferRow } from '../actors/transfer/model.ts'
import { planChunks, isoFromMs, MIB } from '../actors/domain/index.ts'
import type { VirtualClock } from './clock.ts'
import type { Rng } from './rng.ts'
import { sample, type Scenario } from './scenario.ts'
import type { SimOrchestrator } from './nodes.ts'
import { chunkSha256, chunkMd5, type SimBlobStore } from './world.ts'

export const CLIENT_ASK_TIMEOUT_MS = 30_000 // 30 s, as the API's actor timeout
export const DEFAULT_UPLOAD_MBPS = 1000
/** Chunk uploads in flight per transfer: the CLI's `--parallel` default (node/commands/transfer/shared.ts). */
export const DEFAULT_UPLOAD_PARALLEL = 4

/**
 * When each chunk's upload ends, in ms after the first byte: `parallel` chunks in flight at once, taken
 * in index order, sharing the client's bandwidth equally (processor sharing, as TCP flows on one link
 * roughly do); a finished chunk's share goes to the next one. Chunks that end at the same instant get
 * the same time, so the caller may stage them with one timer.
 */
export function uploadSchedule (lengths: readonly number[], uploadMbps: number, parallel: number): number[] {
  if (!(uploadMbps > 0)) throw new RangeError(`upload rate ${uploadMbps} Mbit/s: must be > 0`)
  if (!Number.isInteger(parallel) || parallel < 1) throw new RangeError(`parallel ${parallel}: must be an integer >= 1`)
  const bytesPerMs = uploadMbps * 1000 / 8
  const done = new Array<number>(lengths.length)
  const active: Array<{ index: number, left: number }> = []
  let next = 0
  let now = 0
  while (next < lengths.length || active.length > 0) {
    while (active.length < parallel && next < lengths.length) { active.push({ index: next, left: lengths[next]! }); next++ }
    // Each active chunk moves at bytesPerMs / active.length; the smallest remainder ends first.
    const share = bytesPerMs / active.length
    const least = Math.min(...active.map(a => a.left))
    now += least / share
    for (const a of active) a.left -= least
    for (let i = active.length - 1; i >= 0; i--) {
      if (active[i]!.left <= 1e-9 * lengths[active[i]!.index]!) { done[active[i]!.index] = now; active.splice(i, 1) }
    }
  }
  return done
}

export interface ClientTransfer { id: string, coordinator: string, chunks: number, bytes: number, createdAt: number, state: 'creating' | 'uploading' | 'finalized' | 'refused' }

export interface WorkloadDeps {
  clock: VirtualClock
  rng: Rng
  scenario: Scenario
  orchestrators: SimOrchestrator[]
  destinations: Array<{ id: string, share: number }>
  blobs: SimBlobStore
  startMs: number
  endMs: number
}

export class Workload {
  readonly #deps: WorkloadDeps
  readonly transfers: ClientTransfer[] = []
  refused = 0
  #seq = 0

  constructor (deps: WorkloadDeps) { this.#deps = deps }

  start (): void {
    const n = this.#deps.scenario.workload.transfers
    if (n > 0) this.#scheduleNext(this.#deps.startMs)
  }

  #gapMs (): number {
    const { scenario } = this.#deps
    const mean = (this.#deps.endMs - this.#deps.startMs) / scenario.workload.transfers
    return scenario.workload.arrival === 'uniform' ? mean : this.#deps.rng.exponential(mean)
  }

  #scheduleNext (fromMs: number): void {
    if (this.#seq >= this.#deps.scenario.workload.transfers) return
    // Poisson arrivals past the end are pulled back in: the scenario's transfer count is exact.
    const at = Math.min(Math.round(fromMs + (this.#seq === 0 && this.#deps.scenario.workload.arrival === 'uniform' ? 0 : this.#gapMs())), this.#deps.endMs - 1)
    const { clock } = this.#deps
    clock.setTimer(Math.max(0, at - clock.now()), () => {
      this.#arrive()
      this.#scheduleNext(Math.max(at, clock.now()))
    })
  }

  #pickDestination (): string {
    const ds = this.#deps.destinations
    const total = ds.reduce((a, d) => a + d.share, 0)
    let x = this.#deps.rng.next() * total
    for (const d of ds) { x -= d.share; if (x < 0) return d.id }
    return ds[ds.length - 1]!.id
  }

  #arrive (): void {
    const { rng, scenario, clock, orchestrators } = this.#deps
    const seq = this.#seq++
    const coordinator = orchestrators[rng.int(orchestrators.length)]!
    const bytes = Math.max(1, Math.round(sample(scenario.workload.sizeMiB, rng) * MIB))
    const plan = planChunks(bytes)
    const uploadMbps = Math.max(1e-3, scenario.workload.uploadMbps ? sample(scenario.workload.uploadMbps, rng) : DEFAULT_UPLOAD_MBPS)
    const now = clock.now()
    const iso = isoFromMs(now)
    const id = `t${String(seq).padStart(8, '0')}`
    const row: TransferRow = {
      id, status: 'pending', sender_hotkey: 'sim-client', filename: `${id}.bin`, total_size: bytes, chunk_size: plan.chunkSize, total_chunks: plan.totalChunks,
      tier: 'sim', destination_id: this.#pickDestination(), api_key_id: null, org_id: null, coordinator_id: '', metadata: { name: `${id}.bin` }, upload: null,
      chunks_received: 0, chunks_delivered: 0, chunks_verified: 0, bytes_received: 0, bytes_delivered: 0, finalize_requested: false,
      created_at: iso, updated_at: iso, started_at: null, finalized_at: null, completed_at: null, error_code: null, error_message: null
    }
    const t: ClientTransfer = { id, coordinator: coordinator.id, chunks: plan.totalChunks, bytes, createdAt: now, state: 'creating' }
    this.transfers.push(t)
    const lengths = Array.from({ length: plan.totalChunks }, (_, i) => plan.chunk(i).length)
    const uploadEnds = uploadSchedule(lengths, uploadMbps, scenario.workload.uploadParallel ?? DEFAULT_UPLOAD_PARALLEL).map(ms => Math.ceil(ms))
    void this.#run(coordinator, row, t, uploadEnds, plan)
  }

  async #run (coordinator: SimOrchestrator, row: TransferRow, t: ClientTransfer, uploadEnds: number[], plan: ReturnType<typeof planChunks>): Promise<void> {
    const { clock, blobs } = this.#deps
    const call = <T>(make: (reply: never) => CoordinatorMsg): Promise<Outcome<T>> =>
      ask<CoordinatorMsg, Outcome<T>>(coordinator.coordinator.ref, clock, CLIENT_ASK_TIMEOUT_MS, make as never, 'coordinator')
    try {
      const created = await call<TransferRow>(reply => ({ type: 'create', row, reply }))
      if (!created.ok) { t.state = 'refused'; this.refused++; return }
      t.state = 'uploading'
      // Each chunk is staged once its bytes are in; chunks ending at the same instant share one timer.
      const stageChunk = (index: number): Promise<Outcome<{ duplicate: boolean }>> => {
        const c = plan.chunk(index)
        const sha256 = chunkSha256(t.id, index)
        blobs.stage(sha256, c.length)
        return call<{ duplicate: boolean }>(reply => ({ type: 'chunk', transferId: t.id, index, sha256, md5: chunkMd5(sha256), length: c.length, reply }))
      }
      const startedAt = clock.now()
      const byEnd = new Map<number, number[]>()
      uploadEnds.forEach((ms, index) => { const at = byEnd.get(ms); if (at === undefined) byEnd.set(ms, [index]); else at.push(index) })
      const pending: Array<Promise<Outcome<{ duplicate: boolean }>>> = []
      for (const [ms, indices] of [...byEnd].sort((a, b) => a[0] - b[0])) {
        await new Promise<void>(resolve => clock.setTimer(Math.max(0, startedAt + ms - clock.now()), resolve))
        for (const index of indices) {
          const p = stageChunk(index)
          p.catch(() => {}) // seen by Promise.all below; not unhandled while later chunks upload
          pending.push(p)
        }
      }
      const staged = await Promise.all(pending)
      if (staged.some(s => !s.ok)) { t.state = 'refused'; this.refused++; return }
      const fin = await call<TransferRow>(reply => ({ type: 'finalize', transferId: t.id, reply }))
      if (!fin.ok) { t.state = 'refused'; this.refused++; return }
      t.state = 'finalized'
    } catch {
      t.state = 'refused'
      this.refused++
    }
  }
}
