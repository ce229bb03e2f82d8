import { S3Client, CreateBucketCommand, CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand, GetObjectCommand, ListPartsCommand } from '@aws-sdk/client-s3'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { createHash } from 'node:crypto'
const c = JSON.parse(readFileSync('/tmp/rgwx/creds.json', 'utf8'))
const s3 = new S3Client({ endpoint: c.endpoint, region: c.region, credentials: { accessKeyId: c.accessKeyId, secretAccessKey: c.secretAccessKey }, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' })
const B = 'exp'
try { await s3.send(new CreateBucketCommand({ Bucket: B })) } catch {}
const PART = 16 * 1024 * 1024
const data = Buffer.alloc(PART * 2); for (let i = 0; i < data.length; i += 4) data.writeUInt32LE(i, i)
function put (url: string, body: Buffer, opts: { abortAfter?: number, slowMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const u = new URL(url)
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'PUT', headers: { 'content-length': body.length, 'content-type': 'application/octet-stream' } }, res => {
      res.resume(); res.on('end', () => resolve(String(res.headers.etag) + ' ' + res.statusCode))
    })
    req.on('error', e => resolve('error ' + e.message))
    let off = 0
    const step = 1024 * 1024
    const pump = () => {
      if (opts.abortAfter !== undefined && off >= opts.abortAfter) { req.destroy(); return }
      if (off >= body.length) { req.end(); return }
      req.write(body.subarray(off, off + step)); off += step
      setTimeout(pump, opts.slowMs ?? 0)
    }
    pump()
  })
}
async function scenario (name: string, fn: (url: (n: number) => Promise<string>) => Promise<void>) {
  const key = 'k-' + name
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: B, Key: key }))
  const url = (n: number) => getSignedUrl(s3, new UploadPartCommand({ Bucket: B, Key: key, UploadId, PartNumber: n }), { expiresIn: 600 })
  await fn(url)
  const lp = await s3.send(new ListPartsCommand({ Bucket: B, Key: key, UploadId }))
  const parts = (lp.Parts ?? []).map(p => ({ PartNumber: p.PartNumber, ETag: p.ETag }))
  await s3.send(new CompleteMultipartUploadCommand({ Bucket: B, Key: key, UploadId, MultipartUpload: { Parts: parts } }))
  await new Promise(r => setTimeout(r, 2000))
  try {
    const o = await s3.send(new GetObjectCommand({ Bucket: B, Key: key }))
    const h = createHash('sha256'); let n = 0
    for await (const p of o.Body as any) { h.update(p); n += p.length }
    console.log(name, 'read', n, h.digest('hex') === createHash('sha256').update(data).digest('hex') ? 'OK' : 'MISMATCH')
  } catch (e) { console.log(name, 'READ FAILED', (e as Error).name, (e as any).code) }
}

const p1 = data.subarray(0, PART), p2 = data.subarray(PART)
function openPut (url: string, body: Buffer) {
  const u = new URL(url)
  let resolve!: (s: string) => void
  const done = new Promise<string>(r => { resolve = r })
  const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: 'PUT', headers: { 'content-length': body.length } }, res => { res.resume(); res.on('end', () => resolve(String(res.statusCode))) })
  req.on('error', e => resolve('err ' + e.message))
  return { req, done }
}
const write = (req: http.ClientRequest, b: Buffer) => new Promise<void>(res => { if (req.write(b)) res(); else req.once('drain', () => res()) })
for (let r = 0; r < Number(process.env.N ?? 10); r++) {
  const d = r % 12
  await scenario('race' + r + '-d' + d, async url => {
    const ua = await url(1), ub = await url(1)
    const A = openPut(ua, p1)
    await write(A.req, p1.subarray(0, 15 * 1024 * 1024))
    await new Promise(res => setTimeout(res, 200))
    const Bp = openPut(ub, p1)
    await write(Bp.req, p1.subarray(0, 4 * 1024 * 1024 - 1))
    await new Promise(res => setTimeout(res, 100))
    A.req.destroy()
    await new Promise(res => setTimeout(res, d))
    Bp.req.end(p1.subarray(4 * 1024 * 1024 - 1))
    console.log('A', await A.done, 'B', await Bp.done)
    await put(await url(2), p2)
  })
}
s3.destroy()
