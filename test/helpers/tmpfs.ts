// A small disk for full-disk tests: a tmpfs of a given size, mounted for one test and gone after it.
// Mounting needs Linux and root; tests skip with the reason otherwise.
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Why a tmpfs cannot be mounted here, or null when it can. */
export function tmpfsSkipReason (): string | null {
  if (process.platform !== 'linux') return 'tmpfs mounts need Linux'
  if (process.getuid?.() !== 0) return 'the full-disk test mounts a tmpfs and needs root; run as root to include it'
  return null
}

/** Mounts a `mib` MiB tmpfs on a fresh directory, unmounted and removed at the test's teardown. */
export async function mountTmpfs (t: { teardown (fn: () => unknown): void }, mib: number, prefix: string): Promise<string> {
  const mnt = await mkdtemp(join(tmpdir(), prefix))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', mnt])
  t.teardown(async () => {
    try { execFileSync('umount', ['-l', mnt]) } catch {}
    await rm(mnt, { recursive: true, force: true })
  })
  return mnt
}
