// The live OpenAPI document: a real orchestrator node (its API with every route group, chain routes
// included) started on a loopback hyperdht testnet in a temporary directory, asked for /openapi.json,
// then stopped. The typed client in api/client/ is generated from it (`npm run client:generate`), and
// a test regenerates it and fails if the committed client differs.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import createTestnet from 'hyperdht/testnet.js'
import { pino } from 'pino'
import { BwnetNode } from './node.ts'
import { NODE_DEFAULTS, type NodeConfig } from './config.ts'

export const CLIENT_DIR = join(import.meta.dirname, '..', 'api', 'client')
export const CLIENT_SCHEMA_FILE = join(CLIENT_DIR, 'schema.ts')

/** /openapi.json of a freshly started orchestrator. */
export async function liveOpenApi (): Promise<Record<string, any>> {
  const data = await mkdtemp(join(tmpdir(), 'bwnet-openapi-'))
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  const node = new BwnetNode({
    config: { ...NODE_DEFAULTS, role: 'orchestrator', port: 0, data, network: 'openapi', bootstrap: testnet.bootstrap.map(b => `${b.host}:${b.port}`), dhtHost: '127.0.0.1', logLevel: 'silent' } as NodeConfig,
    logger: pino({ level: 'silent' }),
    dht: testnet.createNode()
  })
  try {
    await node.start()
    const res = await fetch(`${node.url}/openapi.json`)
    if (!res.ok) throw new Error(`/openapi.json answered ${res.status}`)
    return await res.json() as Record<string, any>
  } finally {
    await node.stop()
    await testnet.destroy()
    await rm(data, { recursive: true, force: true })
  }
}

/** The TypeScript types (openapi-typescript) of a document, as committed in api/client/schema.ts. */
export async function clientSchemaSource (spec: Record<string, any>): Promise<string> {
  const { default: openapiTS, astToString } = await import('openapi-typescript')
  const ast = await openapiTS(spec as never, { alphabetize: true })
  return '// Generated from the live /openapi.json by `npm run client:generate` (node/openapi.ts). Do not edit.\n' +
    '/* eslint-disable */\n' + astToString(ast)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const spec = await liveOpenApi()
  const out = process.argv[2] === '--spec' ? process.argv[3] : undefined
  if (out !== undefined) await writeFile(out, JSON.stringify(spec, null, 2) + '\n')
  else await writeFile(CLIENT_SCHEMA_FILE, await clientSchemaSource(spec))
  process.exit(0)
}
