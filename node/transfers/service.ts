// The transfer API's service: validates input, applies the caller's plan limits, stages chunk bytes
// durably in the blob store, and hands every state change to the coordinator actor.
import { randomUUID } from 'node:crypto'
import type { Store, Clock } from '../../actors/ports.ts'
import { ask, type Ref } from '../../actors/runtime.ts'
import type { CoordinatorMsg, Outcome, ChunkRecorded } from '../../actors/transfer/coordinator.ts'
import { TERMINAL, keys, type TransferRow, type ChunkRow } from '../../actors/transfer/model.ts'
import { planChunks, checkTotalSize, MIN_CHUNK_SIZE, MAX_CHUNKS } from '../../actors/domain/chunk-plan.ts'
import { isoFromMs } from '../../actors/domain/chain-time.ts'
import { pinBlob, releaseBlobRef } from '../../actors/transfer/blob-refs.ts'
import { checkHotkey, MAX_CHUNK_BODY_BYTES } from '../../protocol/index.ts'
import type { Principal, Plan } from '../../api/accounts/model.ts'
import { PLAN_REQUESTS_PER_MINUTE } from '../../api/accounts/model.ts'
import type { TransferService, TransferRecord, TransferChunks, CreateTransferBody, ChunkAck, ChunkBodyOptions, TiersResponse, ListQuery } from '../../api/transfers.ts'
import { backfillIndex, prefixRange } from '../../actors/store.ts'
import {
  TransferNotFound, TransferClosed, ChunkConflict, ChunksMissing, ChunkIndexInvalid, ChunkSizeInvalid, ChunkDigestMismatch, ChunkTooLarge,
  HotkeyInvalid, TierUnknown, SizeInvalid, FilenameInvalid, FilenameTaken, FileTooLarge, TooManyTransfers, Timeout, RateLimited, withExtensions
} from '../../api/errors.ts'
import { pathProblem, normalizeFilename } from '../adapters/destinations/filename.ts'
import type { DestinationRegistry } from './destinations.ts'
import type { StorageGuard } from '../storage.ts'
import { BodyTooLongError, BodyTooShortError, DigestMismatchError, type IngestingBlobStore, type StagedBody } from '../adapters/blob-store.ts'

export const ASK_TIMEOUT_MS = 30_000
// MAX_CHUNK_BODY_BYTES (protocol/messages/transfer.ts, 1 GiB): larger chunks (files over ~3.3 TiB) are not accepted.
export { MAX_CHUNK_BODY_BYTES }
export const CONCURRENCY_RETRY_AFTER_S = 30
/** Set in the `meta` table once transfers stored before the organization index have their keys. */
const ORG_INDEX_DONE = 'org_transfers_indexed'

export const TIERS = [
  { name: 'STANDARD', description: 'Parallel delivery by the network\'s workers, verified before completion.' }
] as const

/** Plan limits: seed §8. Sizes in decimal gigabytes. */
export const PLAN_LIMITS: Record<Plan, { concurrentTransfers: number | null, maxFileSizeBytes: number | null }> = {
  free: { concurrentTransfers: 3, maxFileSizeBytes: 5_000_000_000 },
  pro: { concurrentTransfers: 10, maxFileSizeBytes: 50_000_000_000 },
  enterprise: { concurrentTransfers: null, maxFileSizeBytes: null }
}

export interface TransferServiceDeps {
  store: Store
  blobs: IngestingBlobStore
  clock: Clock
  coordinator: Ref<CoordinatorMsg>
  destinations: DestinationRegistry
  /** Free space on the data directory: creates and chunk bodies are refused with 507 past the watermark. */
  storage?: Pick<StorageGuard, 'room' | 'failed' | 'refusal'>
}

/** Where a transfer counts for the plan limits: its organization and its key's plan. */
const limitBucket = (organizationId: string, plan: string): string => `${organizationId}/${plan}`

/**
 * Chunk bodies one organization may stream in at once (each holds a socket and a temp file): as many
 * as one `bwnet transfer put` at its most (`--parallel 64` × `--transfers 16`).
 */
export const MAX_CHUNK_BODIES_PER_ORG = 1024

export class NodeTransferService implements TransferService {
  readonly #deps: TransferServiceDeps
  readonly maxChunkBytes = MAX_CHUNK_BODY_BYTES
  /**
   * Non-terminal transfers per organization and plan (`<org>/<plan>`), for the concurrency limit: all of
   * an organization's keys on one plan share it, so minting keys does not multiply it. A row from before
   * plans were recorded counts for its key (`key/<id>`).
   */
  readonly #active = new Map<string, Set<string>>()
  /** Chunk bodies streaming in, per organization. */
  readonly #bodies = new Map<string, number>()
  /**
   * Transfers past the limit check that the coordinator has not yet answered, per organization and plan: each holds its
   * slot from the check until the create succeeds (its transfer then counts) or fails, so parallel
   * creates never pass the limit together.
   */
  readonly #reserved = new Map<string, Set<string>>()
  #loading: Promise<void> | null = null
  #indexing: Promise<void> | null = null

  constructor (deps: TransferServiceDeps) { this.#deps = deps }

  /** Keeps the concurrency count in step with the coordinator's transfer changes. */
  onTransferChanged (row: TransferRow): void {
    const owner = row.org_id !== null && row.plan !== undefined ? limitBucket(row.org_id, row.plan) : row.api_key_id !== null ? `key/${row.api_key_id}` : null
    if (owner === null) return
    const set = this.#active.get(owner) ?? new Set<string>()
    if (TERMINAL.has(row.status)) set.delete(row.id)
    else set.add(row.id)
    this.#active.set(owner, set)
  }

  /** Every caller waits for the one load: a create must not count before the stored transfers are in. A failed load is tried again by the next create. */
  async #loadActive (): Promise<void> {
    this.#loading ??= (async () => {
      for await (const [, row] of this.#deps.store.table<TransferRow>('transfers').entries()) this.onTransferChanged(row)
    })().catch((err: unknown) => { this.#loading = null; throw err })
    await this.#loading
  }

  /**
   * Takes a slot for transfer `id` under the key's plan limit, counted over its organization's keys on
   * that plan, or refuses; no await between the count and the take.
   */
  #reserve (principal: Principal, limit: number | null, id: string): () => void {
    const key = limitBucket(principal.organizationId, principal.plan)
    const active = this.#active.get(key)
    const reserved = this.#reserved.get(key) ?? new Set<string>()
    let count = (active?.size ?? 0) + (this.#active.get(`key/${principal.keyId}`)?.size ?? 0)
    // A create whose change the coordinator already reported is counted once.
    for (const r of reserved) if (active?.has(r) !== true) count++
    if (limit !== null && count >= limit) {
      throw withExtensions(new TooManyTransfers(`The ${principal.plan} plan allows ${limit} transfers in progress, for all of an organization's keys on it; finish or cancel one first.`),
        { concurrent_transfers: limit }, { 'retry-after': String(CONCURRENCY_RETRY_AFTER_S) })
    }
    this.#reserved.set(key, reserved.add(id))
    return () => {
      reserved.delete(id)
      if (reserved.size === 0 && this.#reserved.get(key) === reserved) this.#reserved.delete(key)
    }
  }

  /**
   * Whether a transfer in progress writes to `destinationId`, a destination of organization `org`: only
   * that organization's transfers can name it (a create takes its own destinations or a built-in one), and
   * those from before organizations; only theirs are read.
   */
  async activeForDestination (destinationId: string, org: string | null): Promise<boolean> {
    await this.#indexOrgTransfers()
    const transfers = this.#deps.store.table<TransferRow>('transfers')
    for (const owner of new Set([org, null])) {
      for await (const [key] of this.#deps.store.table('index').entries(prefixRange(keys.orgTransfers(owner)))) {
        const row = await transfers.get(key.slice(key.lastIndexOf('/') + 1))
        if (row === undefined) this.#dropDangling(key.slice(key.lastIndexOf('/') + 1), key)
        else if (row.destination_id === destinationId && !TERMINAL.has(row.status)) return true
      }
    }
    return false
  }

  async #ask<T> (make: (reply: any) => CoordinatorMsg): Promise<T> {
    let out: Outcome<T>
    try {
      out = await ask<CoordinatorMsg, Outcome<T>>(this.#deps.coordinator, this.#deps.clock, ASK_TIMEOUT_MS, make, 'coordinator')
    } catch (err) {
      if ((err as { code?: string }).code === 'BWN_ERR_ACTOR_TIMEOUT') throw new Timeout('The coordinator did not answer in time; retry.')
      throw err
    }
    if (out.ok) return out.value
    const ctor = ({ BWN_ERR_TRANSFER_NOT_FOUND: TransferNotFound, BWN_ERR_TRANSFER_CLOSED: TransferClosed, BWN_ERR_CHUNK_CONFLICT: ChunkConflict, BWN_ERR_CHUNKS_MISSING: ChunksMissing } as Record<string, new (m: string) => Error>)[out.code]
    const err = ctor ? new ctor(out.detail) : new TransferClosed(out.detail)
    throw out.extensions ? withExtensions(err, out.extensions) : err
  }

  async #owned (id: string, principal: Principal): Promise<TransferRow> {
    const row = await this.#deps.store.table<TransferRow>('transfers').get(id)
    // Another organization's transfer answers exactly like a missing one. A transfer from before
    // organizations (no org_id) belongs to the key that created it, and to no other key: its id shows in
    // the data URLs any worker it was offered to saw.
    const mine = row !== undefined && (row.org_id !== null ? row.org_id === principal.organizationId : row.api_key_id !== null && row.api_key_id === principal.keyId)
    if (!mine) throw new TransferNotFound(`No transfer ${id}.`)
    return row
  }

  toRecord (row: TransferRow, opts: { redactName: boolean }): TransferRecord {
    return {
      id: row.id, status: row.status, tier: row.tier, sender_hotkey: row.sender_hotkey, destination_id: row.destination_id,
      transfer_name: opts.redactName ? null : row.metadata.name,
      stored_filename: opts.redactName ? null : row.stored_filename ?? null,
      metadata: opts.redactName ? {} : { name: row.metadata.name },
      total_size: row.total_size, chunk_size: row.chunk_size, total_chunks: row.total_chunks,
      chunks: { received: row.chunks_received, delivered: row.chunks_delivered, verified: row.chunks_verified, total: row.total_chunks },
      bytes: { received: row.bytes_received, delivered: row.bytes_delivered, total: row.total_size },
      finalize_requested: row.finalize_requested,
      created_at: row.created_at, updated_at: row.updated_at, started_at: row.started_at, finalized_at: row.finalized_at, completed_at: row.completed_at,
      error: row.error_code !== null ? { code: row.error_code, message: row.error_message ?? '' } : null
    }
  }

  async create (body: CreateTransferBody, principal: Principal): Promise<TransferRecord> {
    const hk = checkHotkey(body.sender_hotkey)
    if (!hk.ok) throw new HotkeyInvalid(`sender_hotkey is not a valid SS58 address: ${hk.reason}.`)
    const tier = TIERS.find(t => t.name === body.tier)
    if (tier === undefined) throw withExtensions(new TierUnknown(`Unknown tier "${body.tier}"; valid tiers: ${TIERS.map(t => t.name).join(', ')}.`), { valid_tiers: TIERS.map(t => t.name) })
    const limits = PLAN_LIMITS[principal.plan]
    if (limits.maxFileSizeBytes !== null && body.total_size > limits.maxFileSizeBytes) {
      throw withExtensions(new FileTooLarge(`total_size ${body.total_size} exceeds the ${principal.plan} plan's ${limits.maxFileSizeBytes} bytes.`), { max_file_size_bytes: limits.maxFileSizeBytes })
    }
    const sizeProblem = checkTotalSize(body.total_size)
    if (sizeProblem === 'too_large') throw new FileTooLarge(`total_size ${body.total_size} is larger than a transfer can be.`)
    if (sizeProblem !== null) throw new SizeInvalid(`total_size is not valid: ${sizeProblem}.`)
    // One name per look: the NFC form is what is checked, stored and delivered (docs/transfers.md#filenames).
    body = { ...body, filename: normalizeFilename(body.filename) }
    // A name or a relative path of names (`sub/b.txt`): docs/transfers.md#filenames.
    const nameProblem = pathProblem(body.filename)
    if (nameProblem !== null) throw new FilenameInvalid(`filename refused: ${nameProblem}.`)
    const plan = planChunks(body.total_size)
    if (plan.chunkSize > MAX_CHUNK_BODY_BYTES) throw new FileTooLarge(`a ${body.total_size}-byte file needs chunks larger than this node accepts (${MAX_CHUNK_BODY_BYTES} bytes).`)
    const destinationId = body.destination_id ?? await this.#deps.destinations.defaultId()
    if (destinationId === undefined) throw new TransferClosed('This node has no default destination; pass destination_id.')
    const destination = await this.#deps.destinations.visible(destinationId, principal)
    await this.#checkName(destinationId, body.filename, body.total_size, plan, principal.organizationId)
    // Staging holds every chunk until the transfer ends: refused now if the whole file cannot fit. The
    // built-in sink writes a second copy on the same disk before staging lets go of the first.
    const onDisk = destination?.builtin === true ? 2 * body.total_size : body.total_size
    await this.#deps.storage?.room(onDisk, `a ${body.total_size}-byte transfer${onDisk > body.total_size ? ' (staged, and delivered to this node\'s sink)' : ''}`)
    await this.#loadActive()
    const row = this.#newRow(body, principal, tier.name, destinationId, plan)
    const release = this.#reserve(principal, limits.concurrentTransfers, row.id)
    try {
      const created = await this.#ask<TransferRow>(reply => ({ type: 'create', row, reply }))
      // Counted as active before its reservation goes: the slot is never free in between.
      this.onTransferChanged(created)
      return this.toRecord(created, { redactName: false })
    } finally {
      // Refused or timed out: the slot is free again (a create the coordinator still makes after a
      // timeout is counted when its change arrives).
      release()
    }
  }

  #newRow (body: CreateTransferBody, principal: Principal, tier: string, destinationId: string, plan: { chunkSize: number, totalChunks: number }): TransferRow {
    const now = isoFromMs(this.#deps.clock.now())
    return {
      id: randomUUID(), status: 'pending', sender_hotkey: body.sender_hotkey, filename: body.filename, total_size: body.total_size,
      chunk_size: plan.chunkSize, total_chunks: plan.totalChunks, tier, destination_id: destinationId,
      api_key_id: principal.keyId, org_id: principal.organizationId, plan: principal.plan, coordinator_id: '', metadata: { name: body.filename }, upload: null,
      chunks_received: 0, chunks_delivered: 0, chunks_verified: 0, bytes_received: 0, bytes_delivered: 0, finalize_requested: false,
      created_at: now, updated_at: now, started_at: null, finalized_at: null, completed_at: null, error_code: null, error_message: null
    }
  }

  /** A name the destination would refuse at completion is refused now, before any byte moves. */
  async #checkName (destinationId: string, filename: string, totalSize: number, plan: { chunkSize: number, totalChunks: number }, namespace: string): Promise<void> {
    const driver = await this.#deps.destinations.driverFor(destinationId)
    if (driver.checkName === undefined) return
    try {
      // In the organization's own namespace: another organization's files never change this answer.
      await driver.checkName({ transferId: '', filename, totalSize, chunkSize: plan.chunkSize, totalChunks: plan.totalChunks, namespace })
    } catch (err) {
      const status = (err as { status?: number }).status
      if (status === 409) throw new FilenameTaken(`filename ${filename} is taken among your organization's files at the destination and no variant of it fits in 255 bytes; choose another name.`)
      if (status === 400) throw new FilenameInvalid(`filename refused by the destination: ${(err as Error).message}`)
      // Unreachable now: the destination may be back by delivery; the name is checked again at completion.
    }
  }

  /**
   * Streams one chunk's body into the blob store (hashed in the same pass, refused with 413 the
   * moment it runs past the chunk's planned length), makes it durable, takes its blob reference in
   * the same step, and only then records it with the coordinator. Nothing is read from `body`
   * before the transfer, the index and the declared length have been checked.
   */
  async putChunk (id: string, index: number, body: AsyncIterable<Uint8Array>, opts: ChunkBodyOptions, principal: Principal): Promise<{ ack: ChunkAck, created: boolean }> {
    const row = await this.#owned(id, principal)
    if (!Number.isInteger(index) || index < 0 || index >= row.total_chunks) throw new ChunkIndexInvalid(`Chunk index ${index} is outside 0..${row.total_chunks - 1}.`)
    if (TERMINAL.has(row.status)) throw new TransferClosed(`The transfer is ${row.status}; it takes no more chunks.`)
    // Each body streaming holds a socket, a temp file and its descriptor: one organization holds at
    // most MAX_CHUNK_BODIES_PER_ORG at once, whatever its plan's request rate.
    const org = principal.organizationId
    const open = this.#bodies.get(org) ?? 0
    if (open >= MAX_CHUNK_BODIES_PER_ORG) {
      throw withExtensions(new RateLimited(`This organization is sending ${open} chunk bodies at once, as many as the node takes; retry once one has ended.`), { chunk_bodies: open }, { 'retry-after': '1' })
    }
    this.#bodies.set(org, open + 1)
    try {
      return await this.#putChunkBody(id, index, row, body, opts)
    } finally {
      const left = (this.#bodies.get(org) ?? 1) - 1
      if (left > 0) this.#bodies.set(org, left); else this.#bodies.delete(org)
    }
  }

  async #putChunkBody (id: string, index: number, row: TransferRow, body: AsyncIterable<Uint8Array>, opts: ChunkBodyOptions): Promise<{ ack: ChunkAck, created: boolean }> {
    // Looked up while the body streams (a repeat of a received index is answered without a write).
    const existingRow = this.#deps.store.table<ChunkRow>('chunks').get(keys.chunk(id, index))
    existingRow.catch(() => {})
    const expected = planChunks(row.total_size).chunk(index).length
    const tooLarge = (): Error => withExtensions(new ChunkTooLarge(`Chunk ${index} is ${expected} bytes; the body is longer.`), { expected_bytes: expected })
    const tooShort = (got: number): Error => withExtensions(new ChunkSizeInvalid(`Chunk ${index} must be ${expected} bytes; got ${got}.`), { expected_bytes: expected })
    if (opts.contentLength !== null && opts.contentLength > expected) throw tooLarge()
    if (opts.contentLength !== null && opts.contentLength < expected) throw tooShort(opts.contentLength)
    const what = `chunk ${index} (${expected} bytes)`
    // A write that failed for space is the storage-full refusal (507), never a 500.
    const orFull = (err: unknown): unknown => this.#deps.storage?.failed(err) === true ? this.#deps.storage.refusal(what, expected, null) : err
    // A check, not a hold: a client's body may trickle for as long as its connection lives, and a
    // tenant opening many would hold the node's room for everyone (the sink, whose writers hold a
    // budget window each, holds its room: node-sink.ts).
    await this.#deps.storage?.room(expected, what)
    let staged: StagedBody
    try {
      staged = await this.#deps.blobs.ingest(body, { length: expected, sha256: opts.sha256, md5: await this.#needsMd5(row.destination_id) })
    } catch (err) {
      if (err instanceof BodyTooLongError) throw tooLarge()
      if (err instanceof BodyTooShortError) throw tooShort(err.received)
      if (err instanceof DigestMismatchError) throw new ChunkDigestMismatch(`Chunk ${index} hashes to ${err.actual}, not the X-Chunk-SHA256 given.`)
      throw orFull(err)
    }
    const digest = staged.sha256
    let existing: ChunkRow | undefined
    try { existing = await existingRow } catch (err) { await staged.discard(); throw err }
    if (existing !== undefined) {
      if (existing.sha256 !== digest) {
        await staged.discard()
        throw withExtensions(new ChunkConflict(`Chunk ${index} was already received with other bytes.`), { chunk_index: index })
      }
      // The recorded chunk's blob may be gone: a coordinator that recorded it long after its upload timed
      // out, when the disk sweep had reclaimed the unreferenced blob. This copy then takes its place (its
      // reference is already stored); otherwise it is not needed.
      let present: boolean
      try { present = await this.#deps.blobs.has(digest) } catch (err) { await staged.discard(); throw err }
      if (present) await staged.discard()
      else {
        try { await staged.commit() } catch (err) { throw orFull(err) }
      }
      return { ack: await this.#ack(id, index, digest, staged.bytes, true, null), created: false }
    }
    // Durable before acknowledged: the file and its directory entry are fsynced. The blob is pinned
    // in the same step as the rename (no release on the digest runs between) and stays pinned until
    // the coordinator has written the chunk row and its blob reference in one batch.
    let unpin: (opts?: { recheck?: boolean }) => void = () => {}
    try { await staged.commit(async () => { unpin = pinBlob(this.#deps.blobs, digest) }) } catch (err) { throw orFull(err) }
    let out: ChunkRecorded
    try {
      out = await this.#ask<ChunkRecorded>(reply => ({ type: 'chunk', transferId: id, index, sha256: digest, md5: staged.md5 ?? '', length: staged.bytes, reply }))
    } catch (err) {
      // Refused (cancelled meanwhile, or a racing upload of other bytes): the blob goes unless
      // another chunk references the same content. After a timeout the coordinator may still record
      // the chunk: the blob stays (at worst unreferenced), and no release put off by the pin runs now.
      const timedOut = (err as { code?: string }).code === 'BWN_ERR_TIMEOUT'
      unpin({ recheck: !timedOut })
      if (!timedOut) await releaseBlobRef(this.#deps.store, this.#deps.blobs, digest, null, index)
      throw err
    }
    unpin()
    return { ack: await this.#ack(id, index, digest, staged.bytes, out.duplicate, out.chunksReceived ?? null), created: !out.duplicate }
  }

  async #ack (id: string, index: number, sha256: string, bytes: number, duplicate: boolean, chunksReceived: number | null): Promise<ChunkAck> {
    const received = chunksReceived ?? (await this.#deps.store.table<TransferRow>('transfers').get(id))?.chunks_received ?? 0
    return { transfer_id: id, chunk_index: index, sha256, bytes, duplicate, chunks_received: received }
  }

  /** Destinations whose parts are checked by ETag (S3 multipart) need each chunk's md5. */
  async #needsMd5 (destinationId: string): Promise<boolean> {
    try {
      return !(await this.#deps.destinations.driverFor(destinationId)).readableBeforeComplete
    } catch {
      return true
    }
  }

  async finalize (id: string, principal: Principal): Promise<TransferRecord> {
    await this.#owned(id, principal)
    return this.toRecord(await this.#ask<TransferRow>(reply => ({ type: 'finalize', transferId: id, reply })), { redactName: false })
  }

  async get (id: string, principal: Principal): Promise<TransferRecord> {
    return this.toRecord(await this.#owned(id, principal), { redactName: false })
  }

  async chunks (id: string, principal: Principal): Promise<TransferChunks> {
    const row = await this.#owned(id, principal)
    const items: TransferChunks['items'] = []
    for await (const [, c] of this.#deps.store.table<ChunkRow>('chunks').entries(prefixRange(keys.prefix(id)))) {
      items.push({ index: c.chunk_index, bytes: c.length, sha256: c.sha256, state: c.state })
    }
    items.sort((a, b) => a.index - b.index)
    return { transfer_id: id, chunk_size: row.chunk_size, total_chunks: row.total_chunks, items }
  }

  async cancel (id: string, principal: Principal): Promise<TransferRecord> {
    await this.#owned(id, principal)
    const row = await this.#ask<TransferRow>(reply => ({ type: 'cancel', transferId: id, reply }))
    this.onTransferChanged(row)
    return this.toRecord(row, { redactName: false })
  }

  /**
   * A listing reads its organization's index keys (newest first), and the rows of the page only; with a
   * status filter, each of the organization's rows. Never another organization's.
   */
  async list (principal: Principal, query: ListQuery): Promise<{ items: TransferRecord[], total: number }> {
    await this.#indexOrgTransfers()
    const transfers = this.#deps.store.table<TransferRow>('transfers')
    const range = { ...prefixRange(keys.orgTransfers(principal.organizationId)), reverse: true }
    const page: TransferRow[] = []
    let total = 0
    const take = (row: TransferRow): void => {
      if (total >= query.offset && page.length < query.limit) page.push(row)
      total++
    }
    if (query.status === undefined) {
      const found: string[] = []
      for await (const [key] of this.#deps.store.table('index').entries(range)) {
        if (total >= query.offset && found.length < query.limit) found.push(key)
        total++
      }
      const idOf = (key: string): string => key.slice(key.lastIndexOf('/') + 1)
      const rows = await Promise.all(found.map(async key => await transfers.get(idOf(key))))
      rows.forEach((row, i) => { if (row !== undefined) page.push(row); else this.#dropDangling(idOf(found[i]!), found[i]!) })
    } else {
      for await (const [key] of this.#deps.store.table('index').entries(range)) {
        const row = await transfers.get(key.slice(key.lastIndexOf('/') + 1))
        if (row === undefined) this.#dropDangling(key.slice(key.lastIndexOf('/') + 1), key)
        else if (row.status === query.status) take(row)
      }
    }
    return { items: page.map(r => this.toRecord(r, { redactName: true })), total }
  }

  /**
   * An index key whose transfer is gone (a row and its key are written and deleted together; a backfill
   * that read a row the disk sweep then deleted can write its key again): deleted when a read meets it,
   * so it stops counting in listings.
   */
  #dropDangling (id: string, key: string): void {
    const store = this.#deps.store
    void (async () => {
      if (await store.table('transfers').get(id) !== undefined) return
      await store.batch([{ type: 'del', table: 'index', key }])
    })().catch(() => {}) // tried again at the next read that meets it
  }

  /**
   * Transfers stored before the organization index existed get their keys once (ORG_INDEX_DONE marks it);
   * every later transfer's key is written with its row (the coordinator's create).
   */
  async #indexOrgTransfers (): Promise<void> {
    this.#indexing ??= backfillIndex<TransferRow>(this.#deps.store, ORG_INDEX_DONE, 'transfers', row => keys.orgTransfer(row.org_id, row.created_at, row.id))
      .catch((err: unknown) => { this.#indexing = null; throw err })
    await this.#indexing
  }

  tiers (principal: Principal | null): TiersResponse {
    return {
      tiers: TIERS.map(t => ({ name: t.name, description: t.description, min_chunk_size: MIN_CHUNK_SIZE, max_chunks: MAX_CHUNKS })),
      plans: (['free', 'pro', 'enterprise'] as Plan[]).map(p => ({
        plan: p, requests_per_minute: PLAN_REQUESTS_PER_MINUTE[p], concurrent_transfers: PLAN_LIMITS[p].concurrentTransfers, max_file_size_bytes: PLAN_LIMITS[p].maxFileSizeBytes
      })),
      your_plan: principal?.plan ?? null
    }
  }
}
