// Minimal typings for the Holepunch modules, which ship none: only what bwnet calls.
declare module 'hyperdht' {
  import { EventEmitter } from 'node:events'
  export interface DHTOptions { bootstrap?: Array<string | { host: string, port: number }>, host?: string, port?: number, anyPort?: boolean, ephemeral?: boolean, firewalled?: boolean }
  export default class DHT extends EventEmitter {
    constructor (opts?: DHTOptions)
    fullyBootstrapped (): Promise<void>
    address (): { host: string, port: number }
    /** This node's address as the DHT nodes it talked to report it (its NAT sampler): null until they have. */
    readonly host: string | null
    destroy (opts?: { force?: boolean }): Promise<void>
    listening: Set<{ close (): Promise<void> }>
    static keyPair (seed?: Uint8Array): { publicKey: Buffer, secretKey: Buffer }
    static bootstrapper (port: number, host: string, opts?: DHTOptions): DHT
    ready (): Promise<void>
  }
}
declare module 'hyperdht/testnet.js' {
  import DHT from 'hyperdht'
  export interface Testnet { nodes: DHT[], bootstrap: Array<{ host: string, port: number }>, createNode (opts?: object): DHT, destroy (): Promise<void> }
  export default function createTestnet (size?: number, opts?: { host?: string, port?: number, bootstrap?: Array<{ host: string, port: number }>, teardown?: (fn: () => Promise<void>, opts?: object) => void }): Promise<Testnet>
}
declare module 'hyperswarm' {
  import { EventEmitter } from 'node:events'
  import type { Duplex } from 'node:stream'
  import type DHT from 'hyperdht'
  export interface PeerInfo { publicKey: Buffer, topics: Buffer[], prioritized: boolean, ban (status?: boolean): void }
  export interface Discovery { flushed (): Promise<void>, destroy (): Promise<void>, refresh (opts?: { client?: boolean, server?: boolean }): Promise<void> }
  export interface NoiseStream extends Duplex { remotePublicKey: Buffer, publicKey: Buffer, rawStream?: unknown }
  export default class Hyperswarm extends EventEmitter {
    constructor (opts?: { dht?: DHT, keyPair?: { publicKey: Buffer, secretKey: Buffer }, seed?: Uint8Array, maxPeers?: number, firewall?: (remotePublicKey: Buffer) => boolean })
    keyPair: { publicKey: Buffer, secretKey: Buffer }
    connections: Set<NoiseStream>
    dht: DHT
    join (topic: Buffer, opts?: { server?: boolean, client?: boolean }): Discovery
    leave (topic: Buffer): Promise<void>
    flush (): Promise<void>
    listen (): Promise<void>
    destroy (opts?: { force?: boolean }): Promise<void>
    on (event: 'connection', fn: (conn: NoiseStream, info: PeerInfo) => void): this
    on (event: string, fn: (...args: any[]) => void): this
  }
}
declare module 'protomux' {
  import type { Duplex } from 'node:stream'
  export interface Message<T = any> { send (data: T): boolean, onmessage: ((data: T) => void) | null }
  export interface Channel {
    open (handshake?: unknown): void
    close (): void
    closed: boolean
    opened: boolean
    addMessage<T = any> (opts: { encoding: unknown, onmessage?: (data: T) => void | Promise<void> }): Message<T>
    cork (): void
    uncork (): void
  }
  export default class Protomux {
    static from (stream: Duplex | Protomux, opts?: object): Protomux
    stream: Duplex & { writableNeedDrain?: boolean }
    createChannel (opts: { protocol: string, id?: Buffer | null, unique?: boolean, handshake?: unknown, onopen?: (h?: unknown) => void | Promise<void>, onclose?: () => void | Promise<void>, ondestroy?: () => void | Promise<void> }): Channel | null
    isIdle (): boolean
  }
}
declare module 'compact-encoding' {
  const c: { raw: unknown, buffer: unknown, uint: unknown, string: unknown, json: unknown, [k: string]: any }
  export default c
}
// picomatch (globs for `bwnet transfer put --include/--exclude`): the one call bwnet makes.
declare module 'picomatch' {
  export interface PicomatchOptions { basename?: boolean, dot?: boolean, nocase?: boolean }
  export default function picomatch (glob: string | string[], options?: PicomatchOptions): (path: string) => boolean
}
