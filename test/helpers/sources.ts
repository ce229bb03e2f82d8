// The source files under a folder, for the tests that read the tree (ports, error codes, casts, sleeps).
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'

/** Every `.ts` file under `dir`, recursively, skipping folders named in `skip`. */
export async function * tsFiles (dir: string, skip: readonly string[] = []): AsyncGenerator<string> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) { if (!skip.includes(e.name)) yield * tsFiles(p, skip) } else if (e.name.endsWith('.ts')) yield p
  }
}
