// A StrykerJS ignorer for `npm run mutation` (docs/testing.md#mutation-testing): a log line an actor asks
// for (`step.effects.push({ kind: 'log', ... })`) is what an operator reads, not behaviour a test pins,
// so its mutants (another level, an empty message, a missing field) are left out of the score instead of
// counted as survivors. Everything else in the log's statement is still mutated where it is computed.
import { PluginKind, declareValuePlugin } from '@stryker-mutator/api/plugin'

/** `<x>.effects.push({ kind: 'log', ... })` */
function isLogEffect (node) {
  if (node?.type !== 'CallExpression') return false
  const callee = node.callee
  if (callee.type !== 'MemberExpression' || callee.property.type !== 'Identifier' || callee.property.name !== 'push') return false
  if (callee.object.type !== 'MemberExpression' || callee.object.property.type !== 'Identifier' || callee.object.property.name !== 'effects') return false
  const [arg] = node.arguments
  return arg?.type === 'ObjectExpression' && arg.properties.some(p =>
    p.type === 'ObjectProperty' && p.key.type === 'Identifier' && p.key.name === 'kind' && p.value.type === 'StringLiteral' && p.value.value === 'log')
}

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, 'bwnet-log-effects', {
    shouldIgnore (path) {
      if (path.isExpressionStatement() && isLogEffect(path.node.expression)) return 'a log line an actor asks for: read by operators, not pinned by tests'
      return undefined
    }
  })
]
