// Two Messengers wired back to back in memory: each side's frames reach the other's `receive` on a
// later microtask, as a transport would deliver them. Announces are exchanged on connect.
import { randomBytes } from 'node:crypto'
import { newHotkey, type KeyPair } from '../../protocol/index.ts'
import { Messenger } from '../../node/messenger.ts'
import type { Clock } from '../../actors/ports.ts'
import { silentLogger } from './logger.ts'

const ANNOUNCE = { software: 'bwnet/test', capacity: { slots: 1, bandwidthMbps: 1 }, dataUrl: null, attachTo: null }

export interface LinkedPair { a: Messenger, b: Messenger, keyA: KeyPair, keyB: KeyPair, cut (): void, settle (): Promise<void> }

export function linkedMessengers (clock: Clock, roles: { a: 'orchestrator' | 'worker' | 'validator', b: 'orchestrator' | 'worker' | 'validator' }): LinkedPair {
  const keyA = newHotkey()
  const keyB = newHotkey()
  // Frames are processed as they arrive (no time slicing): tests on a manual clock step through them.
  const a = new Messenger(keyA, clock, silentLogger(), { sliceMs: Infinity })
  const b = new Messenger(keyB, clock, silentLogger(), { sliceMs: Infinity })
  let up = true
  let inFlight = 0
  const deliver = (to: Messenger, peer: string, frame: Uint8Array): boolean => {
    if (!up) return false
    inFlight++
    queueMicrotask(() => { inFlight--; if (up) to.receive(peer, frame) })
    return true
  }
  // Each side's connection key, as the other names it (a Noise public key on a real transport).
  const peerA = randomBytes(32).toString('hex')
  const peerB = randomBytes(32).toString('hex')
  a.attach({ publicKey: peerA, send: (_p, f) => deliver(b, peerA, f) }, {
    onConnect: (peer) => { a.announceTo(peer, { ...ANNOUNCE, role: roles.a, hotkey: keyA.address }) }, onDisconnect: () => {}
  })
  b.attach({ publicKey: peerB, send: (_p, f) => deliver(a, peerB, f) }, {
    onConnect: (peer) => { b.announceTo(peer, { ...ANNOUNCE, role: roles.b, hotkey: keyB.address }) }, onDisconnect: () => {}
  })
  a.peerUp(peerB)
  b.peerUp(peerA)
  return {
    a, b, keyA, keyB,
    cut: () => { up = false; a.peerDown(peerB); b.peerDown(peerA) },
    settle: async () => {
      for (let i = 0; i < 100 && inFlight > 0; i++) await new Promise(resolve => setImmediate(resolve))
      await a.settled(); await b.settled()
    }
  }
}
