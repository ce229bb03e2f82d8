// How this Node.js loads the TypeScript sources: by itself where it strips types (Node ≥ 22.18 and
// ≥ 23.6 do by default: `process.features.typescript` is 'strip' or 'transform'), else through tsx
// (Node 20). The sources are erasable syntax only (tsconfig.json: erasableSyntaxOnly,
// verbatimModuleSyntax), so either way runs them. node/bin.js makes the same choice in plain JavaScript.
import { sep } from 'node:path'

/**
 * Whether this runtime loads the checkout's `.ts` modules with no loader. Node.js does not strip types
 * of files under node_modules: a checkout installed there goes through tsx.
 */
export function stripsTypes (): boolean {
  return Boolean((process.features as { typescript?: string | false }).typescript) && !import.meta.filename.split(sep).includes('node_modules')
}

/**
 * The flags a child `node` needs to load the TypeScript sources: none where the runtime strips types,
 * else tsx's `--import`, by URL as the child may run in another directory.
 */
export function typescriptNodeArgs (): string[] {
  return stripsTypes() ? [] : ['--import', import.meta.resolve('tsx')]
}
