export { buildApp } from './app.ts'
export type { ApiDeps, MembershipView, PeerSummary } from './deps.ts'
export { toProblem, problemType, PROBLEM_CONTENT_TYPE, type Problem } from './problem.ts'
