import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { ApiDeps } from '../deps.ts'
import { Unavailable, withExtensions } from '../errors.ts'
import { problemResponse } from '../responses.ts'

const RoleCounts = Type.Object({ orchestrator: Type.Integer(), worker: Type.Integer(), validator: Type.Integer() })
const Health = Type.Object({
  status: Type.Literal('ok'),
  node: Type.Object({ hotkey: Type.String(), role: Type.String(), software: Type.String() }),
  nodes: RoleCounts,
  total: Type.Integer()
})

export default async function healthRoutes (app: FastifyInstance, opts: { deps: ApiDeps }): Promise<void> {
  const { deps } = opts
  app.get('/health', {
    schema: { tags: ['health'], summary: 'Node identity and the network view: nodes known by role', response: { 200: Health } }
  }, async () => {
    const nodes = await deps.membership.counts()
    return { status: 'ok' as const, node: deps.self, nodes, total: nodes.orchestrator + nodes.worker + nodes.validator }
  })
  app.get('/healthz', {
    schema: { tags: ['health'], summary: 'Liveness: the process answers', response: { 200: Type.Object({ status: Type.Literal('ok') }) } }
  }, async () => ({ status: 'ok' as const }))
  app.get('/readyz', {
    schema: { tags: ['health'], summary: 'Readiness: store open and taking writes, swarm joined, actors up', description: 'A 503 names every reason in `reasons` (starting or stopping, an actor down and restarting, the store failing writes for space).', response: { 200: Type.Object({ status: Type.Literal('ready') }), 503: problemResponse(503, 'Not ready: starting, stopping, an actor down, or the store failing writes') } }
  }, async () => {
    if (!deps.ready()) throw withExtensions(new Unavailable('node is starting or stopping'), { reasons: ['starting or stopping'] })
    const reasons = deps.notReady?.() ?? []
    if (reasons.length > 0) throw withExtensions(new Unavailable(`node not ready: ${reasons.join('; ')}`), { reasons })
    return { status: 'ready' as const }
  })
}
