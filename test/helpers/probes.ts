// Routes registered only by tests, guarded exactly as the transfer, destination and telemetry routes
// are: they exercise the guards before those routes exist, and stay as the guards' contract.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { serveResolvedRead } from '../../api/telemetry/read.ts'
import { guardedResponses, paidReadResponses } from '../../api/responses.ts'

export const PROBE_ETAG = '"probe-v1"'
const Ok = Type.Object({ ok: Type.Literal(true), keyId: Type.String() })

export const PROBES = {
  transfer: '/probe/transfers',
  destination: '/probe/destinations/d1',
  telemetry: '/probe/v1/telemetry/network',
  realtime: '/probe/v1/telemetry/realtime/network',
  sellAllowance: '/probe/v1/telemetry/sell-allowance'
} as const

export async function registerProbes (app: FastifyInstance): Promise<void> {
  const ok = async (req: { principal: { keyId: string } | null }) => ({ ok: true as const, keyId: req.principal!.keyId })
  app.get(PROBES.transfer, { config: { auth: { roles: ['client'] } }, schema: { response: guardedResponses({ 200: Ok }) } }, ok)
  app.get(PROBES.destination, { config: { auth: { roles: ['client'], headers: 'x-api-key' } }, schema: { response: guardedResponses({ 200: Ok }) } }, ok)
  // Conditional reads that answer 304 when If-None-Match holds the current ETag, as telemetry does;
  // paid, so GET only (api/plugins/credits.ts).
  const read = (req: { principal: { keyId: string } | null }) => ({ etag: PROBE_ETAG, body: () => JSON.stringify({ ok: true, keyId: req.principal!.keyId }) })
  app.get(PROBES.telemetry, { exposeHeadRoute: false, config: { auth: { telemetry: {} }, read }, schema: { response: paidReadResponses(Ok) } }, serveResolvedRead)
  app.get(PROBES.realtime, { exposeHeadRoute: false, config: { auth: { telemetry: { realtime: true } }, read }, schema: { response: paidReadResponses(Ok) } }, serveResolvedRead)
  app.get(PROBES.sellAllowance, { exposeHeadRoute: false, config: { auth: { telemetry: { orgOnly: true, price: 'sellAllowance' } }, read }, schema: { response: paidReadResponses(Ok, 'sellAllowance') } }, serveResolvedRead)
}
