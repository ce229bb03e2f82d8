// The local Subtensor chain (node/adapters/subtensor/local.ts) goes with the process that started it:
// a `bwnet devnet --chain subtensor` killed with SIGKILL (no handler runs) leaves no chopsticks behind.
import t from 'tap'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { REPO, eventually } from '../../helpers/proc.ts'

t.setTimeout(180_000)

/** Whether `pid` is a live process (a zombie no one has reaped yet counts as gone). */
function alive (pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] !== 'Z'
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  try { process.kill(pid, 0); return true } catch { return false }
}

t.test('SIGKILL of the process that started the local chain: chopsticks exits too', async t => {
  const code = "const { startLocalSubtensor } = await import('./node/adapters/subtensor/local.ts'); const s = await startLocalSubtensor(); console.log(JSON.stringify({ chopsticks: s.pid })); setInterval(() => {}, 60_000)"
  const parent = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  parent.stdout.setEncoding('utf8').on('data', (d: string) => { out += d })
  parent.stderr.setEncoding('utf8').on('data', (d: string) => { err += d })
  let chopsticks = 0
  t.teardown(() => {
    parent.kill('SIGKILL')
    // Only if the test failed: the chain this test started, by its own id.
    if (chopsticks !== 0 && alive(chopsticks)) process.kill(chopsticks, 'SIGKILL')
  })
  const line = await eventually(async () => out.split('\n').find(l => l.startsWith('{')), 90_000, `the chain to start (stderr: ${err.slice(-500)})`, 100)
  chopsticks = (JSON.parse(line) as { chopsticks: number }).chopsticks
  t.ok(alive(chopsticks), `chopsticks runs as PID ${chopsticks}`)
  parent.kill('SIGKILL')
  await eventually(async () => !alive(chopsticks), 30_000, 'chopsticks to exit after its parent was killed', 100)
  t.pass('chopsticks exited with its parent')
})
