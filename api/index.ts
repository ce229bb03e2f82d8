export { buildApp, REDACTED_PATHS } from './app.ts'
export type { ApiDeps, MembershipView, PeerSummary } from './deps.ts'
export { toProblem, problemType, PROBLEM_CONTENT_TYPE, type Problem } from './problem.ts'
export {
  AccountsService, DEFAULT_PRICING, bootstrapDevnetKeys, DEVNET_CREDITS,
  type AccountsOptions, type Pricing, type PriceName, type DevnetKeys, type Principal, type KeyRole, type Scope, type Plan
} from './accounts/index.ts'
export { paidReadResponses, freeReadResponses, guardedResponses, problemResponse, ProblemSchema } from './responses.ts'
export { replyNotModified } from './plugins/credits.ts'
export type { RouteAuth, TelemetryAuth, KeyHeaders } from './plugins/auth.ts'
