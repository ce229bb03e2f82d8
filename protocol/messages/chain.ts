// Chain access over the swarm: one request and one response message, the operation named inside.
// A node that hosts a DevChain answers; `RemoteChain` (actors/chain/remote.ts) asks. Alpha amounts
// travel as decimal rao strings; lists are paged with `skip` + `more` to stay under the frame limit.
import { Type, type Static } from '@sinclair/typebox'
import { Hotkey, Role } from './common.ts'

/** Items per list page; a page of the largest item stays well under MAX_FRAME_BYTES. */
export const CHAIN_PAGE_ITEMS = 500
export const CHAIN_MAX_WEIGHT_ENTRIES = 4096 // uids per vector

const RequestId = Type.String({ minLength: 1, maxLength: 64 })
const BlockNumber = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
const Skip = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
const Rao = Type.String({ pattern: '^(0|[1-9][0-9]{0,38})$' })
const TxId = Type.String({ pattern: '^0x[0-9a-f]{64}$' })
const Uid = Type.Integer({ minimum: 0, maximum: 0xffff_ffff })
const ErrorCode = Type.String({ pattern: '^BWN_ERR_[A-Z_]{1,60}$' })

const op = <T extends string> (name: T) => Type.Literal(name)
const obj = <P extends Parameters<typeof Type.Object>[0]> (props: P) => Type.Object(props, { additionalProperties: false })

export const ChainOp = Type.Union([
  obj({ op: op('head') }),
  obj({ op: op('register'), hotkey: Hotkey, role: Role }),
  obj({ op: op('uid_of'), hotkey: Hotkey }),
  obj({ op: op('standing'), hotkey: Hotkey }),
  obj({ op: op('registrations'), skip: Skip }),
  obj({
    op: op('set_weights'),
    validatorHotkey: Hotkey,
    epoch: BlockNumber,
    uids: Type.Array(Uid, { maxItems: CHAIN_MAX_WEIGHT_ENTRIES }),
    weights: Type.Array(Type.Integer({ minimum: 0, maximum: 65535 }), { maxItems: CHAIN_MAX_WEIGHT_ENTRIES })
  }),
  obj({ op: op('weights_of'), epoch: BlockNumber }),
  obj({ op: op('emissions_for'), hotkey: Hotkey, fromBlock: BlockNumber, toBlock: BlockNumber, skip: Skip }),
  obj({ op: op('sales_for'), hotkey: Hotkey, fromBlock: BlockNumber, toBlock: BlockNumber, skip: Skip }),
  obj({ op: op('record_sale'), hotkey: Hotkey, alphaRao: Rao, block: Type.Union([BlockNumber, Type.Null()]) }),
  obj({ op: op('epoch_close'), epoch: BlockNumber })
])
export type ChainOp = Static<typeof ChainOp>
export type ChainOpName = ChainOp['op']

export const ChainHeadWire = obj({ block: BlockNumber, epoch: BlockNumber, atMs: Type.Number(), blockTimeMs: Type.Integer({ minimum: 1 }), blocksPerEpoch: Type.Integer({ minimum: 1 }) })
export const RegistrationWire = obj({ hotkey: Hotkey, uid: Uid, role: Role, registeredAtBlock: BlockNumber })
export const StandingWire = obj({ hotkey: Hotkey, uid: Uid, role: Role, registeredAtBlock: BlockNumber, stakeRao: Rao, validatorPermit: Type.Boolean() })
const WeightsProofFields = { txId: TxId, block: BlockNumber, epoch: BlockNumber, validatorHotkey: Hotkey }
export const WeightsProofWire = obj(WeightsProofFields)
export const WeightsRecordWire = obj({
  ...WeightsProofFields,
  uids: Type.Array(Uid, { maxItems: CHAIN_MAX_WEIGHT_ENTRIES }),
  weights: Type.Array(Type.Integer({ minimum: 0, maximum: 65535 }), { maxItems: CHAIN_MAX_WEIGHT_ENTRIES })
})
export const EmissionWire = obj({ hotkey: Type.Union([Hotkey, Type.Null()]), uid: Uid, epoch: BlockNumber, block: BlockNumber, alphaRao: Rao })
export const SaleWire = obj({ txId: TxId, hotkey: Hotkey, block: BlockNumber, alphaRao: Rao })
export const EpochCloseWire = obj({
  epoch: BlockNumber, firstBlock: BlockNumber, lastBlock: BlockNumber, startAtMs: Type.Number(), endAtMs: Type.Number(), emittedRao: Rao, burnedRao: Rao
})

export const ChainResult = Type.Union([
  obj({ op: op('head'), head: ChainHeadWire }),
  obj({ op: op('register'), registration: RegistrationWire }),
  obj({ op: op('uid_of'), uid: Type.Union([Uid, Type.Null()]) }),
  obj({ op: op('standing'), standing: Type.Union([StandingWire, Type.Null()]) }),
  obj({ op: op('registrations'), items: Type.Array(RegistrationWire, { maxItems: CHAIN_PAGE_ITEMS }), more: Type.Boolean() }),
  obj({ op: op('set_weights'), proof: WeightsProofWire }),
  // One vector per validator; a large vector makes the frame limit bite first, which is the right bound.
  obj({ op: op('weights_of'), items: Type.Array(WeightsRecordWire, { maxItems: CHAIN_PAGE_ITEMS }) }),
  obj({ op: op('emissions_for'), items: Type.Array(EmissionWire, { maxItems: CHAIN_PAGE_ITEMS }), more: Type.Boolean() }),
  obj({ op: op('sales_for'), items: Type.Array(SaleWire, { maxItems: CHAIN_PAGE_ITEMS }), more: Type.Boolean() }),
  obj({ op: op('record_sale'), sale: SaleWire }),
  obj({ op: op('epoch_close'), close: Type.Union([EpochCloseWire, Type.Null()]) })
])
export type ChainResult = Static<typeof ChainResult>

/** Asks the chain host to run one operation. Sent to the host's hotkey. */
export const ChainRequest = obj({ requestId: RequestId, request: ChainOp })
export type ChainRequest = Static<typeof ChainRequest>

/** The host's answer to one request, matched by `requestId`. */
export const ChainResponse = Type.Union([
  obj({ requestId: RequestId, ok: Type.Literal(true), result: ChainResult }),
  obj({ requestId: RequestId, ok: Type.Literal(false), error: obj({ code: ErrorCode, message: Type.String({ maxLength: 512 }) }) })
])
export type ChainResponse = Static<typeof ChainResponse>
