// The chain's client libraries, loaded as CommonJS like the hotkeys' (protocol/keys.ts): one copy of
// each @polkadot package in a process, and @polkadot/api in about 0.55 s of CPU instead of 1.6 s
// through Node's ESM loader (docs/node.md#start-up). Everything in the node and its tests that talks to a
// Subtensor chain takes these from here.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const api = require('@polkadot/api') as typeof import('@polkadot/api')

export const { ApiPromise, WsProvider, Keyring } = api
export type ApiPromise = import('@polkadot/api').ApiPromise
export type WsProvider = import('@polkadot/api').WsProvider
export type Keyring = import('@polkadot/api').Keyring
export const { blake2AsHex } = require('@polkadot/util-crypto/blake2/asU8a') as typeof import('@polkadot/util-crypto/blake2/asU8a')
