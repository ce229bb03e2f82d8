// The documented client workflow (docs/cli.md) against a devnet, the CLI always a child process:
// login (stdin, and a pseudo-terminal prompt that does not echo) → put a directory of 5 files → list
// → cancel one → status of each; Ctrl-C prints the resume line and the printed command resumes; TTY
// output through `script` (util-linux); no key in any process's argument list while a put that uses a
// profile runs; and a Free key past its request budget shows a countdown instead of stalling.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CLI_INVOCATION, REPO, eventually, runCli, runCliOnce, runShell } from '../../helpers/proc.ts'
import { startTestDevnet, sinkFile, sha256, testBytes } from '../../helpers/devnet.ts'

const KIB = 1024
const MIB = 1024 * KIB
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const CLI = [process.execPath, join(REPO, 'node', 'cli.ts')]

// Longer than the suite's per-file default: some 25 CLI processes, and the Free key's wait is up to a minute.
t.setTimeout(600_000)

/** The CLI under a pseudo-terminal (`script -qfec`): stdout and stderr are a TTY; `write` types. */
function underPty (args: string[], env: Record<string, string>) {
  const command = [...CLI, ...args].map(a => `'${a.replace(/'/g, '\'\\\'\'')}'`).join(' ')
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: REPO, env: { ...process.env, ...env, TERM: 'xterm', COLUMNS: '160' }, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  const waiters: Array<{ re: RegExp, resolve: () => void }> = []
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d
    for (const w of [...waiters]) if (w.re.test(out)) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
  })
  child.stderr.resume()
  const exited = once(child, 'exit') as Promise<[number | null]>
  return {
    output: () => out,
    write: (s: string) => child.stdin.write(s),
    waitFor: (re: RegExp, what: string) => re.test(out)
      ? Promise.resolve()
      : Promise.race([
        new Promise<void>(resolve => waiters.push({ re, resolve })),
        exited.then(([code]) => { if (!re.test(out)) throw new Error(`exited ${code} before ${what}: ${out.slice(-1000)}`) })
      ]),
    exit: async () => (await exited)[0]
  }
}

/** Every process's argument list that contains `needle` (pid and the list); how many were read. */
async function argvsContaining (needle: string): Promise<{ hits: string[], read: number }> {
  const hits: string[] = []
  let read = 0
  for (const pid of (await readdir('/proc')).filter(p => /^[0-9]+$/.test(p))) {
    const argv = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => null)
    if (argv === null) continue
    read++
    if (argv.includes(needle)) hits.push(`${pid}: ${argv.replace(/\0/g, ' ')}`)
  }
  return { hits, read }
}

t.test('the profile workflow against a devnet', { timeout: 600_000 }, async t => {
  const dn = await startTestDevnet(t, { workers: 2 })
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-workflow-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const key = await dn.clientKey('enterprise')
  const secret = key.slice(22)
  const orgId = await dn.orgId()
  // Nothing from the developer's own environment: a private config file, no BWN_API/BWN_KEY.
  const env = { BWN_CONFIG: join(dir, 'config.json'), BWN_STATE_DIR: join(dir, 'state'), BWN_KEYSTORE: join(dir, 'no-keystore.json'), BWN_API: '', BWN_KEY: '', BWN_PROFILE: '', CI: 'true', BWN_PROGRESS_INTERVAL_MS: '200' }
  const last = (stdout: string): any => JSON.parse(stdout.trim().split('\n').at(-1)!)
  // The devnet's Free-plan client key (60 requests a minute) is spent now, so that its minute runs while
  // the other steps do; the last step then waits out only what is left of it.
  const free = dn.file.keys.clientFree!
  /** Seconds until the Free key's minute ends when it is spent (its 429's retry-after), else null. */
  const freeLimited = async (): Promise<number | null> => {
    const res = await fetch(`${dn.file.baseUrl}/transfers/tiers`, { headers: { authorization: `Bearer ${free}` } })
    await res.arrayBuffer()
    return res.status === 429 ? Number(res.headers.get('retry-after') ?? 0) : null
  }
  /** Spends the rest of the Free key's minute (bounded: the limit is 60); the seconds left of it. */
  const spendFree = async (): Promise<number | null> => {
    for (let i = 0; i < 70; i++) { const left = await freeLimited(); if (left !== null) return left }
    return null
  }
  t.ok(await spendFree() !== null, 'the Free key\'s budget is spent at the start')

  await t.test('login: from stdin, and at a terminal prompt that does not echo', async t => {
    const piped = await runCliOnce(['login', '--profile', 'e2e', '--api', dn.file.baseUrl], env, { input: `${key}\n` })
    t.equal(piped.code, 0, piped.stderr)
    t.match(piped.stderr, /saved profile "e2e"/)
    t.equal((await stat(env.BWN_CONFIG)).mode & 0o777, 0o600, 'the config file is 0600')

    const pty = underPty(['login', '--profile', 'tty', '--api', dn.file.baseUrl], env)
    await pty.waitFor(/API key for .*: $/, 'the prompt')
    pty.write(`${key}\r`)
    t.equal(await pty.exit(), 0, pty.output())
    t.notMatch(pty.output(), secret, 'the typed key is not echoed')
    t.match(pty.output(), /saved profile "tty"/)
    const profiles = await runCliOnce(['profiles'], env)
    t.match(profiles.stdout, /^e2e\t.*\tbwn_[0-9a-f]{16}_…\ntty\t/m)
    t.notMatch(profiles.stdout, secret, 'profiles never prints a secret')
  })

  const files = new Map<string, Buffer>([
    ['a.bin', testBytes(MIB, 1)], ['b.bin', testBytes(2 * MIB, 2)], ['c.bin', testBytes(300 * KIB, 3)],
    ['sub/d.bin', testBytes(MIB, 4)], ['sub/e.bin', testBytes(17 * MIB, 5)] // e: two chunks
  ])
  const src = join(dir, 'src')
  await mkdir(join(src, 'sub'), { recursive: true })
  for (const [name, bytes] of files) await writeFile(join(src, name), bytes)
  const ids = new Map<string, string>()

  await t.test('put a directory of 5 files with a profile; no key in any argument list meanwhile', async t => {
    const run = runCli(['transfer', 'put', src, '--recursive', '--profile', 'e2e', '--transfers', '3'], env)
    let scans = 0
    const hits: string[] = []
    let running = true
    void once(run.child, 'exit').then(() => { running = false })
    // Read every /proc/*/cmdline while the put runs (at least once: the put takes seconds).
    while (running) {
      const { hits: h, read } = await argvsContaining(secret)
      if (read > 0) scans++
      hits.push(...h)
      await new Promise(resolve => setTimeout(resolve, 100)) // pacing the scans, not waiting for an event
    }
    const { code } = await run.stop()
    t.equal(code, 0, run.stderr().slice(-2000))
    t.ok(scans >= 1, `scanned the process table ${scans} times during the put`)
    t.same(hits, [], 'the key is in no process\'s argument list')
    const batch = run.lines.at(-1)!
    t.match(batch, { event: 'transfer_put_batch', files_total: 5, files_done: 5, files_failed: 0, interrupted: false })
    for (const f of batch.files) {
      t.match(f, { status: 'completed', error: null, transfer_id: UUID }, f.file)
      ids.set(f.file, f.transfer_id)
    }
    t.equal(ids.size, 5)
    t.match(run.stderr(), /^FILE +SIZE +TRANSFER +STATUS +TIME +SHA256$/m, 'the summary table')
    t.equal(run.stderr().split('\n').filter(l => / completed +[0-9]/.test(l)).length, 5, 'one completed row per file')
    t.match(run.stderr(), /^files: \d\/5 done \| upload: \d+\/6 chunks/m, 'progress counts files and chunks')
    for (const [name, bytes] of files) t.equal(sha256(await readFile(sinkFile(dn.data, orgId, name))), sha256(bytes), `${name} delivered byte for byte, at its relative path`)
  })

  let pendingId = ''
  await t.test('list, cancel one, status of each', async t => {
    const big = join(dir, 'pending.bin')
    await writeFile(big, testBytes(40 * MIB, 9))
    const stopped = await runCliOnce(['transfer', 'put', big, '--profile', 'e2e', '--max-chunks', '1', '--parallel', '1'], env)
    t.equal(stopped.code, 3, stopped.stderr)
    pendingId = stopped.stdout.split('\n')[0]!

    const list = await runCliOnce(['transfer', 'list', '--profile', 'e2e'], env)
    t.equal(list.code, 0, list.stderr)
    const listed = JSON.parse(list.stdout).items.map((r: any) => r.id)
    for (const id of [...ids.values(), pendingId]) t.ok(listed.includes(id), `list shows ${id}`)
    const completed = JSON.parse((await runCliOnce(['transfer', 'list', '--profile', 'e2e', '--status', 'completed', '--json'], env)).stdout)
    t.same(completed.items.map((r: any) => r.id).sort(), [...ids.values()].sort(), '--status completed lists the 5')

    // A short id (8 hex digits) is enough, as with git.
    const cancel = await runCliOnce(['transfer', 'cancel', pendingId.slice(0, 8), '--profile', 'e2e'], env)
    t.equal(cancel.code, 0, cancel.stderr)
    t.match(JSON.parse(cancel.stdout), { id: pendingId, status: 'cancelled' }, 'piped: the record as JSON')
    const again = await runCliOnce(['transfer', 'cancel', [...ids.values()][0]!, '--profile', 'e2e'], env)
    t.equal(again.code, 1, 'a completed transfer cannot be cancelled')
    t.match(again.stderr, /^bwnet: BWN_ERR_/m)

    for (const [name, id] of [...ids, ['pending.bin', pendingId] as const]) {
      const status = await runCliOnce(['transfer', 'status', id, '--profile', 'e2e'], env)
      t.equal(status.code, 0, status.stderr)
      t.match(JSON.parse(status.stdout), { id, status: name === 'pending.bin' ? 'cancelled' : 'completed' }, `status of ${name}`)
    }
    const unknown = [...'0123456789abcdef'].map(c => `${c}f0c`).find(p => ![...ids.values(), pendingId].some(id => id.startsWith(p)))!
    const missing = await runCliOnce(['transfer', 'status', unknown, '--profile', 'e2e'], env)
    t.equal(missing.code, 1)
    t.match(missing.stderr, new RegExp(`^bwnet: BWN_ERR_TRANSFER_NOT_FOUND: no transfer ${unknown}`))
  })

  await t.test('Ctrl-C prints the resume line; running it resumes the same transfer', async t => {
    const path = join(dir, 'interrupted.bin')
    const bytes = testBytes(40 * MIB, 11) // 16 + 16 + 8 MiB
    await writeFile(path, bytes)
    // 8 MiB/s: the first chunk takes about 2 s, long enough to interrupt the second.
    const run = runCli(['transfer', 'put', path, '--profile', 'e2e', '--parallel', '1', '--bwlimit', '8M'], env)
    const id = String((await run.waitFor(l => UUID.test(String(l.msg)), 60_000, 'the transfer id')).msg)
    await new Promise<void>((resolve, reject) => {
      const check = (): void => { if (/^upload: 1\/3 chunks/m.test(run.stderr())) { clearInterval(timer); resolve() } }
      const timer = setInterval(check, 50)
      run.child.once('exit', () => { clearInterval(timer); reject(new Error(`exited before the first chunk: ${run.stderr()}`)) })
    })
    const { code } = await run.stop('SIGINT')
    t.equal(code, 130, 'exit 130')
    const line = /^interrupted: transfer (\S+), (\d)\/3 chunks uploaded; resume with: (.*)$/m.exec(run.stderr())
    t.ok(line, `the resume line (stderr: ${run.stderr().slice(-800)})`)
    t.equal(line![1], id)
    // The command that started the CLI, so it runs as printed from the checkout (no bwnet on PATH).
    t.equal(line![3], `${CLI_INVOCATION} transfer put ${path} --profile e2e --parallel 1 --bwlimit 8M`)
    t.match(run.lines.at(-1), { event: 'transfer_put', status: 'interrupted', transfer_id: id })

    const resumed = await runShell(line![3]!, env)
    t.equal(resumed.code, 0, resumed.stderr.slice(-2000))
    t.equal(resumed.stdout.split('\n')[0], id, 'the same transfer')
    const summary = last(resumed.stdout)
    t.match(summary, { status: 'completed', resumed: true })
    t.ok(summary.chunks_skipped >= 1 && summary.chunks_skipped + summary.chunks_uploaded === 3, `only the missing chunks were sent (${summary.chunks_skipped} skipped)`)
    t.equal(sha256(await readFile(sinkFile(dn.data, orgId, 'interrupted.bin'))), sha256(bytes))
  })

  await t.test('on a terminal: a redrawn bar with bytes, rate and ETA, then one human line', async t => {
    const path = join(dir, 'tty.bin')
    await writeFile(path, testBytes(20 * MIB, 12))
    const pty = underPty(['transfer', 'put', path, '--profile', 'e2e', '--bwlimit', '8M'], { ...env, CI: '' })
    t.equal(await pty.exit(), 0, pty.output())
    const out = pty.output()
    t.match(out, /\r\x1b\[2Kupload: \[[#-]{20}\] +\d+% \d\/2 chunks, [0-9.]+ MiB\/20\.0 MiB, [0-9.]+ MiB\/s, ETA \d+ s/, 'the bar: chunks, bytes, rate and ETA')
    t.match(out, /deliver: \[[#-]{20}\] +\d+% \d\/2 chunks \(verified \d\)/, 'the delivery bar')
    t.match(out, /^completed [0-9a-f-]{36} .*tty\.bin: 2 chunks \(2 sent, 0 already there\)/m, 'a human result line')
    t.notMatch(out, /"event":"transfer_put"/, 'no JSON on a terminal')
  })

  await t.test('a Free key past its budget shows a countdown on every refresh, never a silent stall', async t => {
    const login = await runCliOnce(['login', '--profile', 'free', '--api', dn.file.baseUrl], env, { input: free })
    t.equal(login.code, 0, login.stderr)
    // Still spent since the start, or spent again if its minute ended meanwhile. A few seconds must be
    // left for the countdown to show: with less, the next minute is awaited and spent instead.
    let left = await spendFree()
    if (left !== null && left < 5) {
      await eventually(async () => (await freeLimited()) === null, 15_000, 'the Free key\'s next minute')
      left = await spendFree()
    }
    t.ok(left !== null, `the budget is spent, ${left} s of its minute left`)
    const path = join(dir, 'free.bin')
    await writeFile(path, testBytes(MIB, 13))
    const intervalS = 1
    const res = await runCliOnce(['transfer', 'put', path, '--profile', 'free'], { ...env, BWN_PROGRESS_INTERVAL_MS: String(intervalS * 1000) })
    t.equal(res.code, 0, res.stderr.slice(-2000))
    t.match(res.stderr, /^rate limited, resuming in \d+ s$/m, 'the notice')
    // While it waits, every progress line carries the countdown; consecutive lines step down by about
    // one refresh interval (content, not wall-clock: a missing line would show as a bigger step).
    const countdown = [...res.stderr.matchAll(/^\w+: .*; rate limited, resuming in (\d+) s$/gm)].map(m => Number(m[1]))
    t.ok(countdown.length >= 3, `${countdown.length} countdown lines`)
    const steps = countdown.slice(1).map((v, i) => countdown[i]! - v).filter(d => d >= 0) // a later 429 restarts the count
    // +2: a countdown value is rounded up, and a loaded machine may run the timer late by a little.
    t.ok(steps.every(d => d <= intervalS + 2), `the countdown steps by at most the interval: ${countdown.join(' ')}`)
    t.match(last(res.stdout), { status: 'completed' })
    t.ok(last(res.stdout).rate_limited >= 1, 'the summary counts the 429s')
  })
})
