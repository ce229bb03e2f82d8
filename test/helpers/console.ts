// Captures console.log / console.error lines of a command run inside a test; restores them (and
// process.exitCode) at teardown.
import { rm } from 'node:fs/promises'

export function captureConsole (t: { teardown (fn: () => unknown): void }, cleanup: string[] = []): string[] {
  const lines: string[] = []
  const log = console.log
  const err = console.error
  console.log = (...a: unknown[]) => { lines.push(a.join(' ')) }
  console.error = (...a: unknown[]) => { lines.push(a.join(' ')) }
  t.teardown(async () => {
    console.log = log
    console.error = err
    process.exitCode = undefined
    for (const dir of cleanup) await rm(dir, { recursive: true, force: true })
  })
  return lines
}
