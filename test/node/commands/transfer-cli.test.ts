// The client CLI without a network: profiles (login from stdin, 0600, precedence), the exit-code
// table (0 done, 1 failed/API error, 2 bad usage, 130 interrupted), not-found for any id shape, and
// the "rate limited, resuming in N s" notice, against a small fake API on loopback.
import t from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm, writeFile, stat, readFile, mkdir, chmod } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { CLI_INVOCATION, runCli, runCliOnce } from '../../helpers/proc.ts'
import { resolveCredentials, configPath } from '../../../node/commands/profiles.ts'
import { resumeCommand } from '../../../node/commands/transfer.ts'
import { parseRate, TokenBucket } from '../../../node/transfers/bwlimit.ts'
import { ProgressReporter, newTotals } from '../../../node/transfers/progress.ts'

// Some 25 CLI processes, each a second or more to start on a loaded machine.
t.setTimeout(600_000)

const KEY = 'bwn_0123456789abcdef_' + 'k'.repeat(43)
const ID = randomUUID()
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const reEscape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

interface Fake { url: string, chunkPosts: number, requests: string[] }

/** A fake transfer API: one transfer of one 100-byte chunk; `limitedChunks` chunk posts answer 429 first. */
async function fakeApi (t: { teardown (fn: () => unknown): void }, opts: { limitedChunks?: number, retryAfterS?: number, slowChunkMs?: number } = {}): Promise<Fake> {
  const now = new Date().toISOString()
  let finalized = false
  const record = () => ({
    id: ID, status: finalized ? 'completed' : 'pending', tier: 'STANDARD', sender_hotkey: '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY', destination_id: 'd', transfer_name: 'f.bin',
    metadata: { name: 'f.bin' }, total_size: 100, chunk_size: 100, total_chunks: 1, chunks: { received: finalized ? 1 : 0, delivered: finalized ? 1 : 0, verified: 0, total: 1 },
    bytes: { received: 0, delivered: finalized ? 100 : 0, total: 100 }, finalize_requested: finalized, created_at: now, updated_at: now,
    started_at: null, finalized_at: null, completed_at: null, error: null
  })
  const fake: Fake = { url: '', chunkPosts: 0, requests: [] }
  let limited = opts.limitedChunks ?? 0
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x')
      fake.requests.push(`${req.method} ${url.pathname}`)
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers }).end(JSON.stringify(body))
      if (req.headers.authorization !== `Bearer ${KEY}`) return json(401, { status: 401, code: 'BWN_ERR_KEY_UNKNOWN', detail: 'unknown key' })
      if (req.method === 'GET' && url.pathname === '/transfers') return json(200, { items: [record()], total: 1, limit: 50, offset: 0 })
      if (url.pathname === '/transfers/create') return json(201, record())
      if (url.pathname === `/transfers/${ID}/chunks`) {
        fake.chunkPosts++
        if (limited > 0) { limited--; return json(429, { status: 429, code: 'BWN_ERR_RATE_LIMITED', detail: 'slow down' }, { 'retry-after': String(opts.retryAfterS ?? 1) }) }
        const answer = () => json(201, { transfer_id: ID, chunk_index: 0, sha256: req.headers['x-chunk-sha256'], bytes: 100, duplicate: false, chunks_received: 1 })
        if (opts.slowChunkMs !== undefined) { setTimeout(answer, opts.slowChunkMs); return }
        return answer()
      }
      if (url.pathname === `/transfers/${ID}/finalize`) { finalized = true; return json(202, record()) }
      if (url.pathname === `/transfers/${ID}`) return json(200, record())
      const m = /^\/transfers\/([^/]+)$/.exec(url.pathname)
      if (m !== null && !UUID_RE.test(m[1]!)) return json(400, { status: 400, code: 'BWN_ERR_VALIDATION', detail: 'params/id must match format "uuid"', errors: [{ field: 'id', message: 'must match format "uuid"' }] })
      json(404, { status: 404, code: 'BWN_ERR_TRANSFER_NOT_FOUND', detail: 'No transfer' })
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return fake
}

t.test('profiles: login reads the key from stdin, stores it 0600, and commands find it', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-profile-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const api = await fakeApi(t)
  const cfg = join(dir, 'xdg', 'bwnet', 'config.json')
  const env = { XDG_CONFIG_HOME: join(dir, 'xdg'), BWN_CONFIG: '', BWN_KEY: '', BWN_API: '', BWN_PROFILE: '' }
  t.equal(configPath(env), cfg, 'XDG_CONFIG_HOME is honoured')
  t.equal(configPath({ ...env, BWN_CONFIG: '/x/c.json' }), '/x/c.json', 'BWN_CONFIG overrides')

  const bad = await runCliOnce(['login', '--api', api.url], env, { input: 'bwn_0123456789abcdef_wrongwrongwrongwrongwrongwrongwrongwrongwro\n' })
  t.equal(bad.code, 1, 'a refused key exits 1')
  t.match(bad.stderr, /refused the key \(401\); nothing was saved/)
  t.rejects(stat(cfg), 'nothing written')

  const ok = await runCliOnce(['login', '--api', api.url], env, { input: `${KEY}\n` })
  t.equal(ok.code, 0, ok.stderr)
  t.notMatch(ok.stderr + ok.stdout, KEY.slice(22), 'the secret is never printed')
  t.equal((await stat(cfg)).mode & 0o777, 0o600, 'config is private to its owner')
  t.match(JSON.parse(await readFile(cfg, 'utf8')), { version: 1, default_profile: 'default', profiles: { default: { api: api.url, key: KEY } } })
  const listed = await runCliOnce(['transfer', 'list'], env)
  t.equal(listed.code, 0, listed.stderr)
  // Piped: JSON, as every transfer command when stdout is not a terminal.
  t.match(JSON.parse(listed.stdout), { items: [{ id: ID, status: 'pending' }], total: 1 }, 'list finds the profile without --api or --key')

  const empty = await runCliOnce(['login', '--profile', 'other', '--api', api.url], env, { input: '' })
  t.equal(empty.code, 2, 'no key on stdin is a usage error')

  // Precedence, in process.
  const creds = (flags: Record<string, string>, e: Record<string, string> = {}) => resolveCredentials(flags, { ...env, ...e }, cfg)
  t.match(await creds({}), { api: api.url, key: KEY, profile: 'default' }, 'the default profile')
  t.match(await creds({}, { BWN_KEY: 'envkey', BWN_API: 'http://127.0.0.1:1' }), { api: 'http://127.0.0.1:1', key: 'envkey', profile: null }, 'env beats the default profile')
  t.match(await creds({ profile: 'default' }, { BWN_KEY: 'envkey' }), { key: KEY, profile: 'default' }, 'an explicit --profile beats env')
  t.match(await creds({ key: 'flagkey' }), { key: 'flagkey', profile: null }, '--key beats everything')
  await t.rejects(creds({ profile: 'nope' }), { code: 'BWN_ERR_USAGE', message: /no profile "nope"/ })
  await t.rejects(creds({ profile: '../etc' }), { code: 'BWN_ERR_USAGE' })
  await chmod(cfg, 0o644)
  const loose = await runCliOnce(['transfer', 'list'], env)
  t.equal(loose.code, 1)
  t.match(loose.stderr, /others can read it: run `chmod 600/)
})

t.test('exit codes: 0 done, 1 failed or API error, 2 bad usage, 130 interrupted', { timeout: 480_000 }, async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-exit-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const api = await fakeApi(t)
  const file = join(dir, 'f.bin')
  await writeFile(file, Buffer.alloc(100, 7))
  await mkdir(join(dir, 'd'))
  await writeFile(join(dir, 'd', 'a.bin'), 'x')
  const base = { BWN_CONFIG: join(dir, 'none.json'), BWN_STATE_DIR: join(dir, 'state'), BWN_KEYSTORE: join(dir, 'none'), CI: 'true', BWN_PROFILE: '' }
  const env = { ...base, BWN_API: api.url, BWN_KEY: KEY }
  const cases: Array<[string, string[], Record<string, string>, number, RegExp]> = [
    ['put completes', ['transfer', 'put', file, '--no-progress'], env, 0, /"status":"completed"/],
    ['--help', ['transfer', 'put', '--help'], env, 0, /Usage: bwnet transfer put/],
    ['--parallel 0', ['transfer', 'put', file, '--parallel', '0'], env, 2, /--parallel.*an integer 1\.\.64/],
    ['--bwlimit junk', ['transfer', 'put', file, '--bwlimit', 'fast'], env, 2, /a rate in bytes per second/],
    ['unknown option', ['transfer', 'put', file, '--bogus'], env, 2, /unknown option '--bogus'/],
    ['missing key', ['transfer', 'put', file], { ...base, BWN_API: api.url, BWN_KEY: '' }, 2, new RegExp(`an API key is needed: run \`${reEscape(CLI_INVOCATION)} login --api URL\``)],
    ['unknown profile', ['transfer', 'list', '--profile', 'nope'], base, 2, /no profile "nope"/],
    ['directory without -r', ['transfer', 'put', join(dir, 'd')], env, 2, /is a directory: pass --recursive/],
    ['stdin without --size', ['transfer', 'put', '-'], env, 2, /needs --size/],
    ['bad --status', ['transfer', 'list', '--status', 'done'], env, 2, /Allowed choices are/],
    ['chain weights --epoch abc', ['chain', 'weights', '--epoch', 'abc'], env, 2, /a whole number/],
    ['unknown command', ['transfer', 'push', file], env, 2, /unknown command/],
    ['status of a short id', ['transfer', 'status', '3f0c'], env, 1, /BWN_ERR_TRANSFER_NOT_FOUND: no transfer 3f0c/],
    ['status of a non-id', ['transfer', 'status', 'not-an-id!'], env, 1, /BWN_ERR_TRANSFER_NOT_FOUND: no transfer not-an-id!/],
    ['status of an unknown UUID', ['transfer', 'status', randomUUID()], env, 1, /BWN_ERR_TRANSFER_NOT_FOUND/],
    ['a refused key', ['transfer', 'list'], { ...env, BWN_KEY: 'bwn_0000000000000000_' + 'x'.repeat(43) }, 1, /BWN_ERR_KEY_UNKNOWN/]
  ]
  for (const [name, args, e, code, re] of cases) {
    const res = await runCliOnce(args, e)
    t.equal(res.code, code, `${name}: exit ${code} (stderr: ${res.stderr.slice(-300)})`)
    t.match(res.stdout + res.stderr, re, name)
  }
  const prefix = await runCliOnce(['transfer', 'status', ID.slice(0, 6)], env)
  t.equal(prefix.code, 0, 'a unique prefix of a listed transfer resolves')
  t.equal(JSON.parse(prefix.stdout).id, ID)

  // 130: Ctrl-C while a chunk is in flight (the fake holds its answer until the signal is sent).
  const slow = await fakeApi(t, { slowChunkMs: 60_000 })
  const big = join(dir, 'slow.bin')
  await writeFile(big, Buffer.alloc(100, 9))
  const run = runCli(['transfer', 'put', big, '--no-progress'], { ...env, BWN_API: slow.url })
  await run.waitFor(l => UUID_RE.test(String(l.msg)), 60_000, 'the transfer id')
  const { code } = await run.stop('SIGINT')
  t.equal(code, 130, 'interrupted exits 130')
  t.match(run.stderr(), new RegExp(`interrupted: transfer ${ID}, 0/1 chunks uploaded; resume with: ${reEscape(CLI_INVOCATION)} transfer put ${reEscape(big)} --no-progress\\n`))
  t.match(run.lines.at(-1), { event: 'transfer_put', status: 'interrupted', error: { code: 'BWN_ERR_INTERRUPTED' } }, 'the JSON summary says interrupted')
})

t.test('a 429 is shown as "rate limited, resuming in N s", then the put goes on', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-429-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'f.bin')
  await writeFile(file, Buffer.alloc(100, 7))
  for (const progress of [[], ['--no-progress']]) {
    const api = await fakeApi(t, { limitedChunks: 1, retryAfterS: 2 })
    const res = await runCliOnce(['transfer', 'put', file, '--state', join(dir, `s${progress.length}.json`), ...progress], { BWN_CONFIG: join(dir, 'none.json'), BWN_API: api.url, BWN_KEY: KEY, CI: 'true' })
    t.equal(res.code, 0, res.stderr)
    t.match(res.stderr, /^rate limited, resuming in 2 s$/m, `the notice ${progress.length > 0 ? 'even with --no-progress' : 'on its own line'}`)
    t.match(JSON.parse(res.stdout.trim().split('\n').at(-1)!), { status: 'completed', rate_limited: 1 })
  }
})

t.test('the resume command never carries a key; rates parse; the bucket paces', async t => {
  t.equal(resumeCommand(['transfer', 'put', '/a b/c', '--key', 'bwn_x', '--parallel', '2', '--key=bwn_y'], 'bwnet'), 'bwnet transfer put \'/a b/c\' --parallel 2')
  t.equal(parseRate('10M'), 10 * 1024 * 1024)
  t.equal(parseRate('512K'), 512 * 1024)
  t.equal(parseRate('1.5GiB/s'), 1.5 * 1024 ** 3)
  t.equal(parseRate('100'), 100)
  t.equal(parseRate('fast'), null)
  t.equal(parseRate('0'), null)
  // 64 KiB burst at 64 KiB/s: the 3rd and 4th slices must wait for refills; count waits, not time.
  const bucket = new TokenBucket(64 * 1024, 64 * 1024)
  const order: number[] = []
  await Promise.all([0, 1, 2].map(i => bucket.take(32 * 1024).then(() => order.push(i))))
  t.same(order, [0, 1, 2], 'served in order')
})

t.test('put from stdin: exactly --size bytes, or a clear error', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-stdin-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const env = { BWN_CONFIG: join(dir, 'none.json'), BWN_KEY: KEY, CI: 'true', BWN_KEYSTORE: join(dir, 'none') }
  const ok = await runCliOnce(['transfer', 'put', '-', '--size', '100', '--name', 'f.bin'], { ...env, BWN_API: (await fakeApi(t)).url }, { input: Buffer.alloc(100, 7) })
  t.equal(ok.code, 0, ok.stderr)
  t.match(JSON.parse(ok.stdout.trim().split('\n').at(-1)!), { status: 'completed', chunks_uploaded: 1, bytes_uploaded: 100, state_file: null })
  const short = await runCliOnce(['transfer', 'put', '-', '--size', '100'], { ...env, BWN_API: (await fakeApi(t)).url }, { input: Buffer.alloc(99, 7) })
  t.equal(short.code, 1)
  t.match(short.stderr, /stdin ended after 99 bytes; --size said 100/)
  const long = await runCliOnce(['transfer', 'put', '-', '--size', '100'], { ...env, BWN_API: (await fakeApi(t)).url }, { input: Buffer.alloc(101, 7) })
  t.equal(long.code, 1)
  t.match(long.stderr, /stdin holds more than --size 100 bytes/)
})

t.test('the bucket holds the rate: 1 MiB at 4 MiB/s takes at least ~250 ms', async t => {
  const bucket = new TokenBucket(4 * 1024 * 1024, 64 * 1024)
  const t0 = performance.now()
  for (let i = 0; i < 16; i++) await bucket.take(64 * 1024)
  // A lower bound only: a loaded machine can be slower, never faster.
  t.ok(performance.now() - t0 >= 0.9 * (1024 - 64) / 4096 * 1000, `took ${Math.round(performance.now() - t0)} ms`)
})

t.test('progress lines: bytes, rate, ETA, chunk counts and the countdown (a fake clock)', async t => {
  let now = 0
  const out: string[] = []
  const stream = { isTTY: false, write: (s: string) => { out.push(s); return true } } as unknown as NodeJS.WriteStream
  const totals = newTotals()
  const r = new ProgressReporter(totals, { mode: 'plain', stream, intervalMs: 1000, now: () => now })
  t.equal(r.line(), 'upload: creating the transfer')
  Object.assign(totals.upload, { chunksTotal: 64, bytesTotal: 1024 * 1024 * 1024 })
  r.tick()
  now = 2000
  Object.assign(totals.upload, { chunksDone: 6, bytesDone: 100 * 1024 * 1024 })
  r.tick()
  t.equal(out.at(-1), 'upload: 6/64 chunks, 100 MiB/1.0 GiB, 50.0 MiB/s, ETA 18 s\n')
  r.waiting({ reason: 'rate_limited', ms: 24_000, status: 429, code: 'BWN_ERR_RATE_LIMITED' })
  t.equal(out.at(-1), 'rate limited, resuming in 24 s\n', 'announced at once')
  now = 4000
  r.tick()
  t.match(out.at(-1), /^upload: 6\/64 chunks, .*; rate limited, resuming in 22 s\n$/, 'every refresh carries the countdown')
  now = 27_000
  r.tick()
  t.notMatch(out.at(-1), /rate limited/, 'gone once the wait is over')
  r.phase('deliver')
  Object.assign(totals.deliver, { chunksTotal: 64, chunksDone: 10, verified: 3, bytesTotal: 1024 * 1024 * 1024, bytesDone: 160 * 1024 * 1024 })
  t.match(r.line(), /^deliver: 10\/64 chunks \(verified 3\), 160 MiB\/1.0 GiB/)
  r.stop()
})
