// The operator's control of the workers this orchestrator attaches (docs/node.md#attaching-workers):
// the list, a revocation and its lifting. Operator admin keys only: a worker attached here serves every
// tenant's transfers, so no organization admin decides who it is.
import { Type } from '@sinclair/typebox'
import type { TypedApp } from '../typed-app.ts'
import type { WorkerAttachments } from '../deps.ts'
import { Hotkey, checkHotkey } from '../../protocol/index.ts'
import { guardedResponses } from '../responses.ts'
import { HotkeyInvalid } from '../errors.ts'

const IsoTime = Type.String({ format: 'date-time' })
export const WorkerAttachmentWire = Type.Object({
  hotkey: Hotkey,
  attached: Type.Boolean({ description: 'Holds a live attachment from this orchestrator (connected, or gone with it still valid)' }),
  expiresAt: Type.Union([IsoTime, Type.Null()], { description: 'When that attachment expires; null when it holds none' }),
  revoked: Type.Boolean({ description: 'Revoked by the operator: refused here until reinstated, across restarts' }),
  revokedAt: Type.Union([IsoTime, Type.Null()])
}, { additionalProperties: false })
const HotkeyParams = Type.Object({ hotkey: Hotkey })

/** The path's hotkey, its SS58 checksum included: a mistyped one would be revoked "successfully" and the real worker stay. */
function checkedHotkey (hotkey: string): string {
  const check = checkHotkey(hotkey)
  if (!check.ok) throw new HotkeyInvalid(`${hotkey} is not a valid SS58 hotkey: ${check.reason}`)
  return hotkey
}

export default async function workerRoutes (app: TypedApp, opts: { workers: WorkerAttachments }): Promise<void> {
  const { workers } = opts
  const config = { auth: { roles: ['admin' as const], operator: true } }
  const tags = ['admin']

  app.get('/workers', {
    config,
    schema: { tags, summary: 'Workers this orchestrator attached, and the ones its operator revoked', response: guardedResponses({ 200: Type.Object({ items: Type.Array(WorkerAttachmentWire) }) }) }
  }, async () => ({ items: await workers.list() }))

  app.put('/workers/:hotkey/revocation', {
    config,
    schema: {
      tags,
      summary: 'Revoke a worker: its attachment from this orchestrator is refused at once, its session ends, and it is attached no more (kept across restarts)',
      params: HotkeyParams,
      response: guardedResponses({ 200: WorkerAttachmentWire }, [409])
    }
  }, async (req) => await workers.revoke(checkedHotkey(req.params.hotkey)))

  app.delete('/workers/:hotkey/revocation', {
    config,
    schema: {
      tags,
      summary: 'Lift a worker\'s revocation: it may attach again, within the limits',
      params: HotkeyParams,
      response: guardedResponses({ 200: Type.Object({ worker: WorkerAttachmentWire, wasRevoked: Type.Boolean() }, { additionalProperties: false }) })
    }
  }, async (req) => {
    const { view, wasRevoked } = await workers.reinstate(checkedHotkey(req.params.hotkey))
    return { worker: view, wasRevoked }
  })
}
