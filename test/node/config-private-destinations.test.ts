// The operator's switch for private destinations: off by default, on by flag, env or config file.
import t from 'tap'
import { resolveConfig, NodeSettings, NODE_SETTINGS, NODE_DEFAULTS } from '../../node/config.ts'

const base = { BWN_ROLE: 'worker', BWN_BOOTSTRAP: '127.0.0.1:1' }
const resolve = (env: Record<string, string>, flags: Record<string, unknown> = {}) => resolveConfig(NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, { env: { ...base, ...env }, flags })

t.equal(resolve({}).allowPrivateDestinations, false, 'off by default')
t.equal(resolve({ BWN_ALLOW_PRIVATE_DESTINATIONS: 'true' }).allowPrivateDestinations, true, 'env true')
t.equal(resolve({ BWN_ALLOW_PRIVATE_DESTINATIONS: '0' }).allowPrivateDestinations, false, 'env 0')
t.equal(resolve({}, { allowPrivateDestinations: true }).allowPrivateDestinations, true, 'the --allow-private-destinations flag')
t.throws(() => resolve({ BWN_ALLOW_PRIVATE_DESTINATIONS: 'maybe' }), { code: 'BWN_ERR_CONFIG', message: /allowPrivateDestinations/ })
