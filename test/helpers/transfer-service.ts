// A stand-in coordinator for transfer-service tests (node/transfers/service.ts): it stores each transfer
// it is asked to create, as the real one does, and answers chunk records when told how.
import { randomUUID } from 'node:crypto'
import { spawnSupervised, type Ref } from '../../actors/runtime.ts'
import { TransferState } from '../../actors/transfer/state.ts'
import type { CoordinatorMsg, ChunkRecorded } from '../../actors/transfer/coordinator.ts'
import type { TransferRow } from '../../actors/transfer/model.ts'
import type { Store } from '../../actors/ports.ts'
import { systemClock } from '../../node/clock.ts'
import { silentLogger } from './logger.ts'

export function storingCoordinator (system: Ref<any>, store: Store, opts: { chunk?: ChunkRecorded, created?: (row: TransferRow) => void } = {}): Ref<CoordinatorMsg> {
  return spawnSupervised<null, CoordinatorMsg>(system, 'coordinator', { clock: systemClock, logger: silentLogger() } as never, () => null, (state, msg) => {
    if (msg.type === 'create') {
      opts.created?.(msg.row)
      // What the real coordinator's create writes (actors/transfer/state.ts): the row and its organization's index key.
      void store.batch(new TransferState({ self: 'coordinator', newId: randomUUID }).create(msg.row, 0).ops).then(() => msg.reply.resolve({ ok: true, value: msg.row }))
    }
    if (msg.type === 'chunk' && opts.chunk !== undefined) msg.reply.resolve({ ok: true, value: opts.chunk })
    return state
  })
}
