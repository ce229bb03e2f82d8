// .ci/node.sh, the toolchain `make` runs on: a supported system Node is used as it is, an older one is
// replaced by the pinned LTS in .toolchain/, and a version whose integrity is not recorded is refused
// before anything is fetched.
import t from 'tap'
import { execFile } from 'node:child_process'
import { chmod, mkdtemp, readFile, rm, writeFile, access } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { REPO } from '../helpers/proc.ts'

const run = promisify(execFile)
const SCRIPT = join(REPO, '.ci', 'node.sh')

/** A directory holding a `node` that claims `version`, first on PATH. */
async function fakeNode (t: { teardown (fn: () => unknown): void }, version: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-fake-node-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'node'), `#!/bin/sh\necho ${version.split('.')[0]}\n`)
  await chmod(join(dir, 'node'), 0o755)
  return dir
}

t.test('a system Node of a supported line is used as it is', async t => {
  const dir = await fakeNode(t, '24.1.0')
  const { stdout } = await run('bash', [SCRIPT], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } })
  t.equal(stdout.trim(), dir)
})

const pinned = (await readFile(join(REPO, '.node-version'), 'utf8')).trim()
const installed = join(REPO, '.toolchain', `node-v${pinned}`, 'bin')
// make installs it when the system's Node is older than 24 (as on CI); without it this case would fetch
// from the registry, so on a machine whose own Node is new enough it is skipped.
const present = await access(join(installed, 'node')).then(() => true, () => false)

t.test('an older system Node is replaced by the pinned LTS in .toolchain/', { skip: present ? false : `Node ${pinned} is not in .toolchain/ (make uses this machine's own Node)` }, async t => {
  const dir = await fakeNode(t, '20.20.2')
  const { stdout } = await run('bash', [SCRIPT], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } })
  t.equal(stdout.trim(), installed)
})

t.test('a version without a recorded integrity is refused before anything is fetched', async t => {
  const err = await run('bash', [SCRIPT, '99.0.0']).then(() => null, (e: { code: number, stderr: string }) => e)
  t.ok(err, 'exits non-zero')
  t.equal(err?.code, 1)
  t.match(err?.stderr, /no integrity recorded for node-linux-(x64|arm64)@99\.0\.0 in \.ci\/node-integrity: refusing to install it/)
  t.notOk(await access(join(REPO, '.toolchain', 'node-v99.0.0')).then(() => true, () => false), 'nothing installed')
})
