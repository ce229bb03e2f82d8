// A real S3-compatible server for tests: radosgw on loopback, started by .ci/s3-radosgw.sh.
// `make test-deps` (and CI) install it; when it is missing the test fails, it is never skipped.
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { S3Client, CreateBucketCommand, GetObjectCommand } from '@aws-sdk/client-s3'
import { createHash } from 'node:crypto'

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.ci', 's3-radosgw.sh')
const START_TIMEOUT_MS = 120_000 // the script itself gives up after 60 s per stage
const STOP_TIMEOUT_MS = 30_000
const run = promisify(execFile)

export interface S3Server {
  endpoint: string
  accessKeyId: string
  secretAccessKey: string
  region: string
  bucket: string
  /** Milliseconds the server took to come up. */
  startupMs: number
}

interface Teardownable { teardown (fn: () => unknown): void }

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => { typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')) })
    })
  })
}

async function which (bin: string): Promise<boolean> {
  try { await run('sh', ['-c', `command -v ${bin}`]); return true } catch { return false }
}

/** Starts radosgw with a fresh user and bucket; stops it and removes its files on `t.teardown`. */
export async function startS3 (t: Teardownable, bucket = 'bwnet-test'): Promise<S3Server> {
  if (!await which('radosgw')) {
    throw new Error('radosgw is not installed: run `make test-deps` (as root: apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd)')
  }
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-s3-'))
  const stop = async (): Promise<void> => {
    await run(SCRIPT, ['down', dir], { timeout: STOP_TIMEOUT_MS }).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  }
  t.teardown(stop)
  const port = await freePort()
  let monPort = await freePort()
  while (monPort === port) monPort = await freePort()
  const started = performance.now()
  let stdout: string
  try {
    ({ stdout } = await run(SCRIPT, ['up', dir, String(port), String(monPort)], { timeout: START_TIMEOUT_MS }))
  } catch (err) {
    const e = err as { stderr?: string, message: string }
    throw new Error(`radosgw did not start: ${e.message}\n${e.stderr ?? ''}`)
  }
  const startupMs = Math.round(performance.now() - started)
  const credentials = JSON.parse(stdout.trim().split('\n').at(-1)!) as Omit<S3Server, 'bucket' | 'startupMs'>
  const client = new S3Client({
    endpoint: credentials.endpoint,
    region: credentials.region,
    credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
    forcePathStyle: true
  })
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }))
  } finally {
    client.destroy()
  }
  return { ...credentials, bucket, startupMs }
}

export interface ObjectDigest {
  size: number
  sha256: string
}

/** Reads an object and hashes it as it streams (a 256 MiB object never sits in memory). */
export async function readObjectDigest (client: S3Client, bucket: string, key: string): Promise<ObjectDigest> {
  const hash = createHash('sha256')
  let size = 0
  const obj = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
  for await (const piece of obj.Body as AsyncIterable<Uint8Array>) {
    hash.update(piece)
    size += piece.byteLength
  }
  return { size, sha256: hash.digest('hex') }
}
