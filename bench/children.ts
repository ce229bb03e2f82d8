// Child processes of a bench: stopped the same way everywhere.
import type { ChildProcess } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'

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

const CLOCK_TICKS = 100 // USER_HZ of /proc/<pid>/stat on Linux

/** User and system CPU seconds of a process (or one of its threads) from its /proc stat file; null when unreadable. */
export async function userSystemOf (statPath: string): Promise<[number, number] | null> {
  try {
    const fields = (await readFile(statPath, 'utf8')).replace(/^.*\) /s, '').split(' ')
    return [Number(fields[11]) / CLOCK_TICKS, Number(fields[12]) / CLOCK_TICKS]
  } catch { return null }
}

/** What /proc/<pid>/stat says of a process: its parent, its own user + system CPU seconds, and its start time (clock ticks since boot). */
export interface ProcStat { ppid: number, cpuSeconds: number, startTicks: number }

/** Reads /proc/<pid>/stat synchronously (a sampler walking every process); null when the process is gone. */
export function procStatSync (pid: number): ProcStat | null {
  let text: string
  try { text = readFileSync(`/proc/${pid}/stat`, 'utf8') } catch { return null }
  // The command name is in parentheses and may hold spaces: the fields start after its last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { ppid: Number(fields[1]), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS, startTicks: Number(fields[19]) }
}

/** CPU seconds (user + system) a process, or one of its threads, has used so far, from /proc (Linux); null when unreadable. */
export async function cpuSecondsOf (pid: number, thread?: number): Promise<number | null> {
  const cpu = await userSystemOf(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`)
  return cpu === null ? null : cpu[0] + cpu[1]
}
