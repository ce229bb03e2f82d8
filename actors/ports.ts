// The ports actors use to reach the world. The node, the simulator and the tests each plug in
// their own adapters; actors never import an adapter.
import type { Envelope, MessageType, MessageBody } from '../protocol/index.ts'

export interface Timer { cancel (): void }

/** Time and timers. Real: system time. Sim: virtual time. */
export interface Clock {
  /** Milliseconds since the Unix epoch (virtual in the simulator). */
  now (): number
  /** Runs `fn` once after `ms`. */
  setTimer (ms: number, fn: () => void): Timer
  /** Runs `fn` every `ms` until cancelled. */
  every (ms: number, fn: () => void): Timer
}

/**
 * Ids and randomness. Real: the system's cryptographic source (actors/random.ts). Sim: a seeded
 * stream, so a run replays to the byte. Actors never reach the system source themselves (a grep
 * test enforces it).
 */
export interface Random {
  /** A fresh RFC 9562 version-4 UUID. */
  uuid (): string
  /** Uniform in [0, 1). */
  next (): number
  /** `n` random bytes (secret keys: the system source is cryptographic). */
  bytes (n: number): Uint8Array
}

export type TableName =
  | 'meta' | 'transfers' | 'destinations' | 'transfer_assignment_plans' | 'task_offer_batches' | 'tasks'
  | 'task_attempts' | 'task_results' | 'overseer_interventions' | 'workers' | 'orchestrators' | 'validators'
  | 'verdicts' | 'penalties' | 'epochs' | 'snapshots' | 'accounts' | 'api_keys' | 'credit_ledger'
  | 'chunks' | 'chain' | 'index' | 'telemetry' | 'transfer_events' | 'proof_nonces'

export interface RangeOptions { gt?: string, gte?: string, lt?: string, lte?: string, limit?: number, reverse?: boolean }

export interface Table<V> {
  get (key: string): Promise<V | undefined>
  put (key: string, value: V): Promise<void>
  del (key: string): Promise<void>
  entries (range?: RangeOptions): AsyncIterable<[string, V]>
}

export type StoreOp =
  | { type: 'put', table: TableName, key: string, value: unknown }
  | { type: 'del', table: TableName, key: string }

/** Rows in level sublevels, one per table; atomic batches across tables. */
export interface Store {
  table<V> (name: TableName): Table<V>
  /**
   * Writes the ops atomically. A batch survives the process once this resolves; with `sync` it also
   * survives the machine (the log is flushed to disk first): for what a client is told is stored.
   */
  batch (ops: StoreOp[], opts?: { sync?: boolean }): Promise<void>
}

/** Chunk bytes, content-addressed by sha256 (hex). `put` resolves only once the bytes are durable. */
export interface BlobStore {
  put (bytes: Uint8Array, expectedSha256?: string): Promise<string>
  get (sha256: string): Promise<Uint8Array | undefined>
  has (sha256: string): Promise<boolean>
  delete (sha256: string): Promise<void>
}

/** Signed control messages between nodes, addressed by hotkey. */
export interface Network {
  /** This node's hotkey (SS58). */
  readonly self: string
  /** Sends to one peer; false when no connection to it is open. */
  send<T extends MessageType> (to: string, type: T, body: MessageBody<T>): boolean
  /** Sends to every connected peer. */
  broadcast<T extends MessageType> (type: T, body: MessageBody<T>): number
}

export interface InboundMessage { msg: Envelope, peer: string }

/** Structured logger (pino's interface, which tests and the simulator can satisfy cheaply). */
export interface Logger {
  debug (obj: object | string, msg?: string): void
  info (obj: object | string, msg?: string): void
  warn (obj: object | string, msg?: string): void
  error (obj: object | string, msg?: string): void
  child (bindings: Record<string, unknown>): Logger
}
