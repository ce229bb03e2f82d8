// Accounts, keys and credits: the records, their TypeBox schemas (one source for the TS type and
// the JSON Schema the admin routes validate and document) and the closed sets of roles, scopes, plans.
import { Type, type Static } from '@sinclair/typebox'

export const KEY_ROLES = ['client', 'orchestrator', 'worker', 'validator', 'console', 'admin'] as const
export type KeyRole = typeof KEY_ROLES[number]

export const SCOPES = ['telemetry:read', 'telemetry:realtime:read'] as const
export type Scope = typeof SCOPES[number]

export const PLANS = ['free', 'pro', 'enterprise'] as const
export type Plan = typeof PLANS[number]

/** Requests per minute per key; null is unlimited (seed §8). */
export const PLAN_REQUESTS_PER_MINUTE: Record<Plan, number | null> = { free: 60, pro: 300, enterprise: null }

/** Roles whose keys can be bound to one participant's hotkey (they then read only its audit rows). */
export const BINDABLE_ROLES: readonly KeyRole[] = ['orchestrator', 'worker']
const Hotkey = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{46,48}$', description: 'SS58 hotkey of the participant the key is bound to' })

export const Id = Type.String({ format: 'uuid' })
export const KeyId = Type.String({ pattern: '^[0-9a-f]{16}$', description: 'Public id of a key; also its visible prefix' })
const Name = Type.String({ minLength: 1, maxLength: 128 })
const Timestamp = Type.String({ format: 'date-time' })

export const Organization = Type.Object({ id: Id, name: Name, createdAt: Timestamp })
export type Organization = Static<typeof Organization>

export const Project = Type.Object({ id: Id, organizationId: Id, name: Name, createdAt: Timestamp })
export type Project = Static<typeof Project>

export const Environment = Type.Object({ id: Id, organizationId: Id, projectId: Id, name: Name, createdAt: Timestamp })
export type Environment = Static<typeof Environment>

export const GrantLevel = Type.Union([Type.Literal('organization'), Type.Literal('project'), Type.Literal('environment')])
export type GrantLevel = Static<typeof GrantLevel>

/** What a key is, as listed; never its secret or its hash. */
export const ApiKeyView = Type.Object({
  id: KeyId,
  prefix: Type.String({ description: 'The start of the key, enough to recognise it' }),
  name: Type.Union([Name, Type.Null()]),
  organizationId: Id,
  projectId: Type.Union([Id, Type.Null()]),
  environmentId: Type.Union([Id, Type.Null()]),
  grant: GrantLevel,
  role: Type.Union(KEY_ROLES.map(r => Type.Literal(r))),
  operator: Type.Boolean({ description: 'An admin key of the network operator (every organization); other admin keys reach only their own organization' }),
  scopes: Type.Array(Type.Union(SCOPES.map(s => Type.Literal(s)))),
  plan: Type.Union(PLANS.map(p => Type.Literal(p))),
  createdAt: Timestamp,
  expiresAt: Type.Union([Timestamp, Type.Null()]),
  revokedAt: Type.Union([Timestamp, Type.Null()]),
  hotkey: Type.Optional(Hotkey)
})
export type ApiKeyView = Static<typeof ApiKeyView>

/** The stored row: the view plus the sha256 of the whole key. */
export interface ApiKeyRecord extends ApiKeyView { hash: string }

export const NewKey = Type.Object({
  role: Type.Union(KEY_ROLES.map(r => Type.Literal(r))),
  operator: Type.Optional(Type.Boolean({ description: 'Admin keys only: an operator key reaches every organization. Only an operator key may issue one.' })),
  scopes: Type.Optional(Type.Array(Type.Union(SCOPES.map(s => Type.Literal(s))), { uniqueItems: true, maxItems: SCOPES.length })),
  plan: Type.Optional(Type.Union(PLANS.map(p => Type.Literal(p)), { description: 'Chosen by the operator only; default free. An organization admin issues keys on its own plan (any other: 403 BWN_ERR_OPERATOR_ONLY).' })),
  projectId: Type.Optional(Id),
  environmentId: Type.Optional(Id),
  name: Type.Optional(Name),
  expiresAt: Type.Optional(Timestamp),
  hotkey: Type.Optional(Hotkey),
  hotkeyProof: Type.Optional(Type.Object({
    timestamp: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Milliseconds since the epoch when the hotkey signed; refused further than 5 minutes from the server\'s clock (BWN_ERR_HOTKEY_PROOF_STALE)' }),
    nonce: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$', description: 'Unique per proof; a nonce the hotkey used before is refused (BWN_ERR_HOTKEY_PROOF_REPLAYED)' }),
    signature: Type.String({ pattern: '^(0x)?[0-9a-fA-F]{128}$', description: 'The hotkey\'s sr25519 signature (hex) over the method, path, body digest, timestamp and nonce (docs/api.md#binding-proof)' })
  }, {
    additionalProperties: false,
    description: 'With hotkey: that hotkey\'s consent to this very request (`bwnet keys prove-binding`; docs/api.md#binding-proof)'
  }))
}, { additionalProperties: false })
export type NewKey = Static<typeof NewKey>

export const CreatedKey = Type.Object({
  key: Type.String({ description: 'The plain key. Shown once, here; only its hash is stored.' }),
  apiKey: ApiKeyView
})
export type CreatedKey = Static<typeof CreatedKey>

export const LedgerEntry = Type.Object({
  seq: Type.Integer({ minimum: 1 }),
  organizationId: Id,
  amount: Type.Integer({ description: 'Credits added (positive) or spent (negative)' }),
  kind: Type.Union([Type.Literal('grant'), Type.Literal('read')]),
  memo: Type.Union([Type.String({ maxLength: 256 }), Type.Null()]),
  keyId: Type.Union([KeyId, Type.Null()]),
  balanceAfter: Type.Integer(),
  at: Timestamp
})
export type LedgerEntry = Static<typeof LedgerEntry>

export const Balance = Type.Object({
  organizationId: Id,
  balance: Type.Integer(),
  entries: Type.Integer({ description: 'Ledger entries so far' })
})
export type Balance = Static<typeof Balance>

/** Who is calling: the key's public facts, attached to the request by the auth guard. */
export interface Principal {
  keyId: string
  organizationId: string
  projectId: string | null
  environmentId: string | null
  grant: GrantLevel
  role: KeyRole
  /** An admin key of the network operator: the admin API across every organization (docs/security.md). */
  operator?: boolean
  scopes: Scope[]
  plan: Plan
  /** When the key stops working (null: never); caches of authenticated keys honour it. */
  expiresAt?: string | null
  /** The participant an orchestrator or worker key is bound to (null: unbound). */
  hotkey?: string | null
}
