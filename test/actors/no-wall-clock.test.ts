// Actors reach time only through the Clock port, and randomness only through the Random port, so the
// simulator can run them in virtual time and replay a seed to the byte.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { tsFiles } from '../helpers/sources.ts'

const ROOT = join(import.meta.dirname, '..', '..', 'actors')
const FORBIDDEN = /Date\.now|new Date\(|setTimeout|setInterval/
const RANDOM = /randomUUID|Math\.random|randomBytes|randomInt|getRandomValues/
/** The Random port's system source: the one module allowed to reach the system's randomness. */
const RANDOM_PORT = 'random.ts'

t.test('actors/ never reads the wall clock or sets its own timers', async t => {
  let scanned = 0
  for await (const f of tsFiles(ROOT)) {
    scanned++
    const lines = (await readFile(f, 'utf8')).split('\n')
    lines.forEach((line, i) => {
      if (FORBIDDEN.test(line)) t.fail(`${relative(ROOT, f)}:${i + 1}: ${line.trim()}`)
    })
  }
  t.ok(scanned > 3, `scanned ${scanned} files`)
})

t.test('actors/ draw ids and random numbers only through the Random port', async t => {
  let scanned = 0
  for await (const f of tsFiles(ROOT)) {
    if (relative(ROOT, f) === RANDOM_PORT) continue
    scanned++
    const lines = (await readFile(f, 'utf8')).split('\n')
    lines.forEach((line, i) => {
      if (RANDOM.test(line)) t.fail(`${relative(ROOT, f)}:${i + 1}: ${line.trim()}`)
    })
  }
  t.ok(scanned > 3, `scanned ${scanned} files`)
  t.match(await readFile(join(ROOT, RANDOM_PORT), 'utf8'), RANDOM, 'the port itself is where the system source is reached')
})
