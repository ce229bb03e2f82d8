// Child processes of a bench: stopped the same way everywhere.
import type { ChildProcess } from 'node:child_process'

/** How long a child may take to exit after SIGTERM before it is killed. */
export const STOP_GRACE_MS = 10_000

/**
 * Stops `child` with SIGTERM (SIGKILL after `graceMs`) and waits for it to exit. A profiled child
 * needs longer: it writes its profile as it exits.
 */
export async function stopChild (child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}
