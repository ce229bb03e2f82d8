// An orchestrator serves the validators' published snapshots (telemetry epochs, sell allowances). It
// does not trust the last one that arrives: every permitted validator's copy is a vote weighted by its
// stake, and a version is served only when validators holding at least half of all permitted stake have
// published for the same epoch (or key), and the copy backed by the most stake holds at least half of
// theirs. Validators that saw the
// same evidence produce byte-identical envelopes with the same content-derived id, so honest copies
// agree; a minority validator cannot replace a version or add a revision on its own.
import type { Store, StoreOp } from '../ports.ts'
import { collect } from '../store.ts'
import { snapshotIdOf, type EnvelopeContent } from './envelope.ts'

export interface SnapshotVote { validator: string, stakeRao: string, snapshotId: string }

/** The id backed by the most stake (ties: the smaller id), and that stake. */
export function pickByStake (votes: readonly SnapshotVote[]): { snapshotId: string, stake: bigint } | null {
  const tally = new Map<string, bigint>()
  for (const v of votes) tally.set(v.snapshotId, (tally.get(v.snapshotId) ?? 0n) + BigInt(v.stakeRao))
  let best: { snapshotId: string, stake: bigint } | null = null
  for (const [snapshotId, stake] of tally) {
    if (best === null || stake > best.stake || (stake === best.stake && snapshotId < best.snapshotId)) best = { snapshotId, stake }
  }
  return best
}

/** Whether the envelope's id is the one its content derives (a tampered copy is not even a vote). */
export function idMatchesContent (snapshot: { snapshotId: string } & Record<string, unknown>): boolean {
  const { snapshotId, ...content } = snapshot
  try { return snapshotIdOf(content as unknown as EnvelopeContent<unknown>) === snapshotId } catch { return false }
}

/**
 * Records `validator`'s copy for `slot` (the key the version is served under) within `group` (its epoch,
 * or the slot itself), then re-decides every slot of the group. Returns the slots now served.
 * `permittedStake`: the stake of every permitted validator, the quorum's base (without it, none).
 * `stakes`: every permitted validator's stake now. With it, each stored vote weighs what its validator
 * holds now, and a vote of one no longer permitted counts for nothing: a stake moved to another hotkey,
 * or a permit lost, must not keep counting in the votes cast before.
 */
export async function voteSnapshot (store: Store, opts: { group: string, slot: string, validator: string, stakeRao: bigint, snapshot: { snapshotId: string } & Record<string, unknown>, idKey: (id: string) => string, permittedStake?: bigint, stakes?: ReadonlyMap<string, bigint> }): Promise<string[]> {
  const table = store.table<unknown>('snapshots')
  const vote: SnapshotVote = { validator: opts.validator, stakeRao: (opts.stakeRao > 0n ? opts.stakeRao : 1n).toString(), snapshotId: opts.snapshot.snapshotId }
  const voteKey = `vote/${opts.group}/${opts.slot}/${opts.validator}`
  const replaced = (await table.get(voteKey) as SnapshotVote | undefined)?.snapshotId
  await store.batch([
    { type: 'put', table: 'snapshots', key: `cand/${opts.snapshot.snapshotId}`, value: opts.snapshot },
    { type: 'put', table: 'snapshots', key: voteKey, value: vote }
  ])
  const rows = await collect(table, { gte: `vote/${opts.group}/`, lt: `vote/${opts.group}/\xff` })
  const ops: StoreOp[] = []
  // A validator's earlier copy for this slot, named by no vote now, is not kept: a validator sending
  // copy after copy for one slot holds one copy, not all of them (a version served is kept under its slot).
  if (replaced !== undefined && replaced !== vote.snapshotId && !rows.some(([, v]) => (v as SnapshotVote).snapshotId === replaced)) {
    ops.push({ type: 'del', table: 'snapshots', key: `cand/${replaced}` })
  }
  const bySlot = new Map<string, SnapshotVote[]>()
  const voters = new Map<string, bigint>()
  for (const [k, v] of rows) {
    let vote = v as SnapshotVote
    if (opts.stakes !== undefined) {
      // Every row weighs its validator's stake now (the voter's rows for other slots of the group too); a
      // validator missing from the permitted stakes, the voter included, counts for nothing.
      const now = opts.stakes.get(vote.validator)
      if (now === undefined) continue
      vote = { ...vote, stakeRao: (now > 0n ? now : 1n).toString() }
    }
    const slot = k.slice(`vote/${opts.group}/`.length, k.lastIndexOf('/'))
    bySlot.set(slot, [...(bySlot.get(slot) ?? []), vote])
    const stake = BigInt(vote.stakeRao)
    if (stake > (voters.get(vote.validator) ?? 0n)) voters.set(vote.validator, stake)
  }
  const total = [...voters.values()].reduce((a, s) => a + s, 0n)
  // The group's voters must hold half the permitted stake: alone, a small validator decides nothing.
  const quorate = opts.permittedStake === undefined || total * 2n >= opts.permittedStake
  const served: string[] = []
  for (const [slot, votes] of bySlot) {
    const best = pickByStake(votes)
    if (!quorate || best === null || best.stake * 2n < total) {
      // Served while its validator was the only voter, outvoted since: no longer served.
      if (await table.get(slot) !== undefined) ops.push({ type: 'del', table: 'snapshots', key: slot })
      continue
    }
    const snap = await table.get(`cand/${best.snapshotId}`)
    if (snap === undefined) continue
    ops.push({ type: 'put', table: 'snapshots', key: slot, value: snap }, { type: 'put', table: 'snapshots', key: opts.idKey(best.snapshotId), value: slot })
    served.push(slot)
  }
  if (ops.length > 0) await store.batch(ops)
  return served
}
