// The data directory holds the hotkey, the store (destinations' credentials included) and staged files:
// a node makes it readable by its owner only, and reports one made open by hand instead of changing it.
import t from 'tap'
import { mkdtemp, mkdir, rm, stat, chmod } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureDataDir } from '../../node/node.ts'

t.test('a new data directory is 0700; an existing one keeps its mode, which is returned', async t => {
  const root = await mkdtemp(join(tmpdir(), 'bwnet-data-dir-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  const fresh = join(root, 'a', 'b')
  t.equal((await ensureDataDir(fresh)) & 0o777, 0o700)
  t.equal((await stat(join(root, 'a'))).mode & 0o777, 0o700, 'parents made with it too')
  const open = join(root, 'open')
  await mkdir(open)
  await chmod(open, 0o755)
  t.equal((await ensureDataDir(open)) & 0o777, 0o755, 'reported as it is')
})
