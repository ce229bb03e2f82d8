// `bwnet transfer put -r` against a devnet, the CLI a child process: 20 small files arrive with their
// tree kept (sub/deeper/b.txt), empty and hidden files are reported, not sent; --dry-run makes no
// transfer; every file's sha256 is in the summary and `transfer verify` passes on the file and fails
// on a changed byte; a stdin that ends before its --size cancels its transfer.
import t from 'tap'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCliOnce } from '../../helpers/proc.ts'
import { startTestDevnet, sha256, testBytes } from '../../helpers/devnet.ts'

t.setTimeout(400_000)

/**
 * Where the devnet delivered the tree, wherever its sink keeps files: the directory above the one file
 * whose relative path is unique (`sub/deeper/b.txt`), outside any hidden directory.
 */
async function deliveredRoot (data: string, marker: string): Promise<string[]> {
  const roots: string[] = []
  for (const entry of await readdir(data, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name)
    if (entry.isFile() && path.endsWith(`/${marker}`) && !path.slice(data.length).split('/').some(s => s.startsWith('.'))) roots.push(path.slice(0, -marker.length - 1))
  }
  return roots
}

t.test('put -r keeps the tree; dry run, verify, left-out files, short stdin', async t => {
  const dn = await startTestDevnet(t, { workers: 2 })
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-tree-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const key = await dn.clientKey('enterprise')
  const env = { BWN_CONFIG: join(dir, 'none.json'), BWN_STATE_DIR: join(dir, 'state'), BWN_KEYSTORE: join(dir, 'none'), BWN_API: dn.file.baseUrl, BWN_KEY: key, BWN_PROFILE: '', CI: 'true' }
  const api = async (path: string): Promise<any> => await (await fetch(`${dn.file.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } })).json()

  // 20 files in three levels (two share a base name in different directories), one empty, two hidden.
  const src = join(dir, 'src')
  const files = new Map<string, Buffer>()
  for (let i = 0; i < 12; i++) files.set(`f${String(i).padStart(2, '0')}.txt`, testBytes(1000 + i * 37, i))
  for (let i = 0; i < 6; i++) files.set(`sub/s${i}.txt`, testBytes(2000 + i, 100 + i))
  files.set('sub/deeper/b.txt', testBytes(4321, 200))
  files.set('sub/deeper/f00.txt', testBytes(999, 201))
  for (const [rel, bytes] of files) { await mkdir(join(src, rel, '..'), { recursive: true }); await writeFile(join(src, rel), bytes) }
  await writeFile(join(src, 'sub', 'empty.txt'), '')
  await writeFile(join(src, '.hidden'), 'h')
  await mkdir(join(src, '.git'))
  await writeFile(join(src, '.git', 'config'), 'x')
  t.equal(files.size, 20)

  await t.test('--dry-run sends nothing', async t => {
    const before = (await api('/transfers?limit=1')).total
    const dry = await runCliOnce(['transfer', 'put', src, '-r', '--dry-run'], env)
    t.equal(dry.code, 0, dry.stderr)
    const plan = JSON.parse(dry.stdout.trim())
    t.match(plan, { event: 'transfer_dry_run', source: src, left_out: { empty: ['sub/empty.txt'], hidden: ['.git/', '.hidden'] } })
    t.same(plan.files.map((f: any) => f.name).sort(), [...files.keys()].sort(), 'each file would go under its relative path')
    t.equal((await api('/transfers?limit=1')).total, before, 'no transfer was created')
    const some = await runCliOnce(['transfer', 'put', src, '-r', '--dry-run', '--include', 'sub/**', '--exclude', 'f00.txt'], env)
    t.same(JSON.parse(some.stdout).files.map((f: any) => f.name).sort(), [...files.keys()].filter(k => k.startsWith('sub/') && !k.endsWith('/f00.txt')).sort(), '--include then --exclude (a glob without / matches the base name)')
  })

  let ids = new Map<string, string>()
  await t.test('20 files through put -r, the tree kept', async t => {
    const t0 = performance.now()
    const put = await runCliOnce(['transfer', 'put', src, '-r', '--transfers', '4'], env)
    const ms = performance.now() - t0
    t.equal(put.code, 0, put.stderr.slice(-2000))
    // Issue 33's bar: 20 small files in 15 s on the devnet (the whole CLI process, start to exit).
    t.ok(ms <= 15_000, `20 files in ${(ms / 1000).toFixed(1)} s (bound 15 s)`)
    const batch = JSON.parse(put.stdout.trim().split('\n').at(-1)!)
    t.match(batch, { event: 'transfer_put_batch', files_total: 20, files_done: 20, files_failed: 0, left_out: { empty: ['sub/empty.txt'], hidden: ['.git/', '.hidden'] } })
    t.match(put.stderr, /^sub\/empty\.txt +0 B +- +skipped \(empty\)/m, 'the empty file has its row')
    ids = new Map(batch.files.map((f: any) => [f.file, f.transfer_id]))
    for (const f of batch.files) {
      t.equal(f.summary.filename, f.file, `${f.file} sent under its relative path`)
      t.equal(f.summary.sha256, sha256(files.get(f.file)!), `${f.file}: the whole-file sha256 in the summary`)
    }
    const roots = await deliveredRoot(dn.data, 'sub/deeper/b.txt')
    t.equal(roots.length, 1, `one delivered tree (${roots.join(', ')})`)
    for (const [rel, bytes] of files) {
      const record = await api(`/transfers/${ids.get(rel)}`)
      t.match(record, { status: 'completed', transfer_name: rel }, `${rel}: the record names the path`)
      t.equal(sha256(await readFile(join(roots[0]!, rel))), sha256(bytes), `${rel} delivered at its path, byte for byte`)
    }
  })

  await t.test('transfer verify: the file passes, a changed byte fails', async t => {
    const id = ids.get('sub/deeper/b.txt')!
    const ok = await runCliOnce(['transfer', 'verify', id, join(src, 'sub', 'deeper', 'b.txt')], env)
    t.equal(ok.code, 0, ok.stderr)
    t.match(JSON.parse(ok.stdout), { event: 'transfer_verify', transfer_id: id, match: true, status: 'completed', sha256: sha256(files.get('sub/deeper/b.txt')!) })
    const changed = Buffer.from(files.get('sub/deeper/b.txt')!)
    changed[4000] = changed[4000]! ^ 1
    await writeFile(join(dir, 'changed.txt'), changed)
    const bad = await runCliOnce(['transfer', 'verify', id.slice(0, 8), join(dir, 'changed.txt')], env)
    t.equal(bad.code, 1)
    t.match(bad.stderr, /^bwnet: BWN_ERR_CLI_VERIFY_MISMATCH: .* chunk 0 \(bytes 0\.\.4320\) differs/m)
    t.match(JSON.parse(bad.stdout), { match: false, sha256: null })
  })

  await t.test('a stdin that ends before --size cancels its transfer', async t => {
    const short = await runCliOnce(['transfer', 'put', '-', '--size', '100000', '--name', 'short.bin'], env, { input: Buffer.alloc(5000, 1) })
    t.equal(short.code, 1)
    t.match(short.stderr, /stdin ended after 5000 bytes; --size said 100000; transfer [0-9a-f-]{36} cancelled/)
    const summary = JSON.parse(short.stdout.trim().split('\n').at(-1)!)
    t.match(summary, { status: 'cancelled', error: { code: 'BWN_ERR_CLI_INPUT_SHORT' } })
    t.equal((await api(`/transfers/${summary.transfer_id}`)).status, 'cancelled', 'no pending transfer holds a slot')
  })
})
