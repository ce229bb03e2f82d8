// The OpenAPI document is a contract other tools can build on: a client generated from a devnet's own
// /openapi.json by a second generator (openapi-typescript-codegen, beside the openapi-typescript types
// the CLI's client uses: api/client/) compiles under strict TypeScript and moves one transfer end to end,
// with nothing but what the document says (its operations, their parameters, bodies and media types).
import t from 'tap'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'
import { generate } from 'openapi-typescript-codegen'
import { tsImport } from 'tsx/esm/api'
import { startTestDevnet, sinkFile, sha256, testBytes } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'

t.test('a client from a second generator compiles and runs a transfer against the devnet', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const key = await net.clientKey('enterprise')
  const spec = await (await fetch(`${net.file.baseUrl}/openapi.json`)).json() as Record<string, unknown>

  const dir = await mkdtemp(join(tmpdir(), 'bwnet-generated-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await generate({ input: spec as never, output: dir, httpClient: 'fetch', useOptions: true, useUnionTypes: true })
  const services = (await readdir(join(dir, 'services'))).sort()
  t.ok(services.includes('TransfersService.ts'), `services generated: ${services.join(', ')}`)

  // It compiles, strict, against the browser/fetch library alone (no node types, no project settings).
  const program = ts.createProgram([join(dir, 'index.ts')], {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], skipLibCheck: true, types: []
  })
  const diagnostics = ts.getPreEmitDiagnostics(program).map(d => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  t.same(diagnostics, [], 'the generated client compiles with no diagnostic')

  // It runs: create, the chunks as raw bytes, finalize, then the record until completed. The generator
  // writes extensionless imports (`./core/ApiError`), as bundlers take them; Node's own type stripping
  // does not resolve those, so the client loads through tsx, as an application's bundler would load it.
  const client = await tsImport(join(dir, 'index.ts'), import.meta.url) as Record<string, any>
  client.OpenAPI.BASE = net.file.baseUrl
  client.OpenAPI.HEADERS = { 'x-api-key': key }
  const transfers = client.TransfersService
  const data = testBytes(20 * 1024 * 1024, 37)
  const transfer = await transfers.postTransfersCreate({ requestBody: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: data.byteLength, filename: 'generated.bin', tier: 'STANDARD' } }) as { id: string, chunk_size: number, total_chunks: number }
  t.ok(transfer.total_chunks >= 1, `created through the generated client: ${transfer.total_chunks} chunk(s)`)
  for (let i = 0; i < transfer.total_chunks; i++) {
    const chunk = data.subarray(i * transfer.chunk_size, Math.min(data.byteLength, (i + 1) * transfer.chunk_size))
    const ack = await transfers.postTransfersByIdChunks({ id: transfer.id, requestBody: new Blob([new Uint8Array(chunk)]), xChunkIndex: String(i), xChunkSha256: sha256(chunk) })
    t.match(ack, { chunk_index: i }, `chunk ${i} acknowledged`)
  }
  await transfers.postTransfersByIdFinalize({ id: transfer.id })
  const done = await eventually(async () => {
    const r = await transfers.getTransfersById({ id: transfer.id }) as { status: string }
    return ['completed', 'failed'].includes(r.status) ? r : undefined
  }, 60_000, 'the transfer to end', 200)
  t.equal(done.status, 'completed')
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), 'generated.bin'))), sha256(data), 'the destination holds the exact bytes')

  // The document's statuses reach the generated client too: an unknown transfer is its ApiError, a 404
  // with the problem's code.
  const missing = await transfers.getTransfersById({ id: '00000000-0000-4000-8000-000000000000' }).then(() => null, (err: { status: number, body: { code: string } }) => err)
  t.equal(missing?.status, 404)
  t.equal(missing?.body.code, 'BWN_ERR_TRANSFER_NOT_FOUND', 'its problem body is read')
})
