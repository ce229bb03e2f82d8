// Tests wait for events, never for a fixed time: a fixed sleep either wastes time or, on a loaded
// machine, is too short and makes the test flaky. A pause is allowed only between the checks of a
// condition polled up to a deadline, in the helpers listed here.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { tsFiles } from './helpers/sources.ts'

const ROOT = import.meta.dirname
const SELF = relative(ROOT, import.meta.filename)
const SLEEP = /setTimeout\(\s*(r|res|resolve)\s*,|\bsleep\(|from 'node:timers\/promises'|\bdelay\(\s*\d|\.waitForTimeout\(/

/** Files whose pauses sit between polls of a condition with a deadline (or pace a load generator). */
const POLLING: Record<string, string> = {
  'helpers/proc.ts': 'eventually(): polls a condition until its timeout',
  'helpers/rogue.ts': 'until(): woken by events, re-checked at least every 100 ms until its timeout',
  'helpers/flood.ts': 'paces a latency probe during a flood (a load generator, not a wait)',
  'helpers/rogue-flood.ts': 'paces a rogue peer\'s frames (a load generator, not a wait)',
  'net/harness/network.ts': 'eventuallyLab(): polls a condition until its timeout',
  'node/commands/transfer-workflow.test.ts': 'paces the /proc argument-list scans while a put runs (a sampler, not a wait)'
}

t.test('no fixed sleep anywhere in test/', async t => {
  let scanned = 0
  const pausing = new Set<string>()
  for await (const f of tsFiles(ROOT, ['fixtures'])) {
    const rel = relative(ROOT, f)
    if (rel === SELF) continue
    scanned++
    const lines = (await readFile(f, 'utf8')).split('\n')
    lines.forEach((line, i) => {
      if (!SLEEP.test(line)) return
      pausing.add(rel)
      if (POLLING[rel] === undefined) t.fail(`${rel}:${i + 1}: a fixed sleep; wait for an event (or poll a condition with a deadline in a helper): ${line.trim()}`)
    })
  }
  t.ok(scanned > 100, `scanned ${scanned} files`)
  // The allowlist stays exact: a helper that no longer pauses leaves it.
  t.same([...pausing].sort(), Object.keys(POLLING).sort(), 'the polling helpers are the only files that pause')
  t.ok(SLEEP.test('await new Promise(resolve => setTimeout(resolve, 50))') && SLEEP.test("import { setTimeout as sleep } from 'node:timers/promises'"), 'the pattern finds a sleep')
})
