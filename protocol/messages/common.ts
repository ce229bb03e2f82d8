import { Type } from '@sinclair/typebox'

/** SS58 address shape; the checksum is verified separately (protocol/keys.ts checkHotkey). */
export const Hotkey = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{46,48}$' })
export const Role = Type.Union([Type.Literal('orchestrator'), Type.Literal('worker'), Type.Literal('validator')])
export type Role = 'orchestrator' | 'worker' | 'validator'
export const ROLES: readonly Role[] = ['orchestrator', 'worker', 'validator']
export const Uuid = Type.String({ format: 'uuid' })
export const Sha256Hex = Type.String({ pattern: '^[0-9a-f]{64}$' })
