// JSON Schemas of the telemetry and audit routes (seed §2, §4.3-4.5): parameters with their exact
// constraints, the snapshot envelope and each route's data. The response schemas also decide what is
// serialised: a field not named here never leaves the server.
import { Type, type TSchema } from '@sinclair/typebox'

export const TELEMETRY_LIMIT_MAX = 100
export const AUDIT_LIMIT_DEFAULT = 1000
export const AUDIT_LIMIT_MAX = 5000

const DateTime = Type.String({ format: 'date-time' })
const Uuid = Type.String({ format: 'uuid' })
const Int = Type.Integer()
const Num = Type.Number()

export const Limit = Type.Integer({ minimum: 1, maximum: TELEMETRY_LIMIT_MAX, default: TELEMETRY_LIMIT_MAX, description: 'Items per page, 1 to 100' })
export const Cursor = Type.String({ maxLength: 1024, description: 'nextCursor of the previous page; the filters must stay the same' })
export const SnapshotIdParam = Type.String({ format: 'uuid', description: 'A snapshot id; on realtime routes, a live version obtained from a realtime read' })
export const Since = Type.String({ format: 'date-time', description: 'Only items observed at or after this time' })
export const Until = Type.String({ format: 'date-time', description: 'Only items observed at or before this time' })
export const TransferIdParam = Type.String({ format: 'uuid' })
export const ParticipantId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', description: 'An orchestrator or worker id (hotkey)' })
export const EpochParam = Type.String({ pattern: '^[0-9]{1,10}$', description: 'Selects a retained epoch proof' })
export const Hotkey = Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{46,48}$', description: 'SS58 hotkey' })

export const SingleQuery = Type.Object({ snapshotId: Type.Optional(SnapshotIdParam) })
export const ListQuery = Type.Object({
  limit: Type.Optional(Limit),
  cursor: Type.Optional(Cursor),
  snapshotId: Type.Optional(SnapshotIdParam),
  since: Type.Optional(Since),
  until: Type.Optional(Until)
})
export const TaskListQuery = Type.Object({
  ...ListQuery.properties,
  transferId: Type.Optional(TransferIdParam),
  participantId: Type.Optional(ParticipantId)
})
export const HotkeyParams = Type.Object({ hotkey: Hotkey })
export const EpochQuery = Type.Object({ epoch: Type.Optional(EpochParam) })

export function Envelope<T extends TSchema> (data: T, name: string): TSchema {
  const title = typeof data.title === 'string' ? { title: `${data.title}Envelope` } : {}
  return Type.Object({
    snapshotId: Uuid,
    version: Type.String(),
    observedAt: DateTime,
    sourceEpoch: Int,
    formulaReference: Type.String({ format: 'uri' }),
    publishedAt: DateTime,
    evidenceSequence: Type.String(),
    data
  }, { description: `Snapshot envelope (seed §2.1) of ${name}`, ...title })
}

export function EnvelopeList<T extends TSchema> (data: T, name: string): TSchema {
  return Type.Object({
    nextCursor: Type.String({ description: 'Cursor of the next page; the empty string once the listing is complete' }),
    items: Type.Array(Envelope(data, name))
  }, typeof data.title === 'string' ? { title: `${data.title}EnvelopeList` } : {})
}

export const WorkloadEntry = Type.Object({
  measurementWindowStart: DateTime,
  measurementWindowEnd: DateTime,
  reportedCapacityMbps: Num,
  verifiedBandwidthMbps: Num,
  metricDescription: Type.String(),
  measuredBytes: Int,
  measuredDurationMs: Int,
  originalTaskCount: Int,
  attemptCount: Int,
  recoveryAttemptCount: Int,
  successfulTasks: Int,
  failedTasks: Int,
  neutralExcludedTasks: Int,
  pendingVerificationTasks: Int,
  workload: Type.String(),
  orchestratorCount: Int,
  verifiedBytes: Int,
  recoveryVerifiedBytes: Int
})

export const NetworkSummary = Type.Object({
  workerCount: Int,
  orchestratorCount: Int,
  validatorCount: Int,
  completedTransfers: Int,
  transferredBytes: Int,
  lookbackDays: Int,
  observationHour: DateTime,
  measurementWindowStart: DateTime,
  measurementWindowEnd: DateTime,
  reportedCapacityMbps: Num,
  workloads: Type.Array(WorkloadEntry),
  providers: Type.Array(Type.Object({ provider: Type.String(), workerCount: Int })),
  weights: Type.Object({}, { additionalProperties: true, description: 'Reference to the latest published epoch weights' })
})

export const TaskEvidence = Type.Object({
  taskId: Type.String(),
  attemptId: Type.String(),
  batchId: Type.String(),
  orchestratorId: Type.String(),
  workerId: Type.String(),
  workload: Type.String(),
  pool: Type.String({ description: 'qualifying | qualified | unscored' }),
  state: Type.String({ description: 'verified | failed | cancelled | pending_verification (realtime only)' }),
  recovery: Type.Boolean(),
  neutral: Type.Boolean(),
  finishedAt: DateTime,
  verifiedBytes: Int,
  trustedDurationMs: Int,
  verifiedBandwidthMbps: Num
})

export const EpochSummary = Type.Object({
  epoch: Int,
  formulaVersion: Type.String(),
  epochSummaryVersion: DateTime,
  expectedOrchestratorCount: Int,
  contributingOrchestratorCount: Int,
  sumFinalShare: Num,
  computedAt: DateTime,
  previousSnapshotId: Type.Union([Uuid, Type.Null()]),
  correctionReason: Type.Union([Type.String(), Type.Null()]),
  revision: Int
})

const sellCommon = {
  baseWeight: Num,
  receivedWeight: Num,
  baseAlpha7dRao: Type.String(),
  soldAlpha7dRao: Type.String(),
  sales7d: Int,
  lastSaleBlock: Type.Union([Int, Type.Null()]),
  sellDebtAlphaRao: Type.String(),
  sellMultiplier: Num,
  frequencyMultiplier: Num,
  newHotkeyRamp: Num,
  sellAllowanceMultiplier: Num,
  holding: Num,
  baseAlphaRao: Type.String(),
  excessAlpha7dRao: Type.String(),
  computedAt: DateTime
}
const sellOuter = (inner: TSchema): TSchema => Type.Object({ hotkey: Type.String(), uid: Int, epoch: Int, formulaVersion: Type.String(), sellAllowance: inner })
export const SellAllowancePaid = sellOuter(Type.Object({
  ...sellCommon,
  transferableAlphaRao: Type.String(),
  windowEndBlock: Int,
  nextPenaltyFreeSaleBlock: Int,
  nextPenaltyFreeSaleEstimatedAt: DateTime
}))
export const SellAllowanceFree = sellOuter(Type.Object({ ...sellCommon, allowanceRemainingAlphaRao: Type.String() }))

// Dashboard audit (seed §4.3).
export const AuditQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: AUDIT_LIMIT_MAX, default: AUDIT_LIMIT_DEFAULT, description: 'Rows per table' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Row offset per table' }))
})
export const AuditOrchestratorParams = Type.Object({
  orchestratorId: Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', description: 'Orchestrator UUID, UID or hotkey' }),
  transferId: Type.String({ format: 'uuid' })
})
export const AuditWorkerParams = Type.Object({
  workerId: Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$', description: 'Worker id or hotkey' }),
  transferId: Type.String({ format: 'uuid' })
})
const TablePage = Type.Object({ limit: Int, offset: Int, returned: Int, has_more: Type.Boolean(), next_offset: Int })
const Rows = Type.Array(Type.Object({}, { additionalProperties: true }))
export function AuditResponse (tables: readonly string[], title?: string): TSchema {
  return Type.Object({
    transfer_id: Uuid,
    transfer_name: Type.Null(),
    participant: Type.Object({ role: Type.String(), id: Type.String(), hotkey: Type.String() }),
    ...Object.fromEntries(tables.map(t => [t, Rows])),
    pagination: Type.Object({ limit: Int, offset: Int, tables: Type.Object(Object.fromEntries(tables.map(t => [t, TablePage]))) })
  }, title === undefined ? {} : { title })
}

/** Optional If-None-Match on every telemetry and audit read (seed §4.4). */
export const ConditionalHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({ maxLength: 1024, description: 'An ETag of a payload already held: the answer is then 304, free' }))
})

// Component names in the OpenAPI document (api/plugins/openapi.ts hoists titled schemas).
for (const [title, schema] of Object.entries({ WorkloadEntry, NetworkSummary, TaskEvidence, EpochSummary, SellAllowancePaid, SellAllowanceFree, AuditTablePage: TablePage })) (schema as { title?: string }).title ??= title
