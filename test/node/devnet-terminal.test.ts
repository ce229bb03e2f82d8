// The devnet (`make run`) as a person sees it in a terminal: run in a tmux pane (a real terminal: pretty logs,
// colours, line wrapping), read back with capture-pane. A quiet start (a banner with the URLs, no
// warnings, at most 25 lines in the first 10 s), the printed first command runs as printed, a restart
// on the same --data keeps the keys, a second devnet on the same data names the first, a taken port
// names --port.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually, runCliOnce, REPO } from '../helpers/proc.ts'

const run = promisify(execFile)
const START_MS = 90_000 // a loaded machine starts the devnet in well under this
const STOP_MS = 60_000 // a loaded machine stops the devnet's five nodes in well under this
const FIRST_WINDOW_MS = 10_000 // the first 10 s of output, measured from the command's start
const MAX_LINES = 25

const hasTmux = await run('tmux', ['-V']).then(() => true, () => false)
// A build, two devnet starts and a transfer on a shared 2-core machine.
t.setTimeout(480_000)

// Skipped only off CI on a machine without tmux; CI installs it (.ci/run), so there it fails instead.
t.test('the devnet in a terminal', { skip: hasTmux || process.env.CI === 'true' ? false : 'tmux is not installed (apt-get install tmux; .ci/run installs it)' }, async t => {
  t.ok(hasTmux, 'tmux is installed')
  if (!hasTmux) return
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-terminal-'))
  const data = join(dir, 'devnet')
  const socket = `bwnet-test-${process.pid}`
  const tmux = async (...args: string[]): Promise<string> => (await run('tmux', ['-L', socket, ...args])).stdout
  t.teardown(async () => {
    await tmux('kill-server').catch(() => {})
    await rm(dir, { recursive: true, force: true })
  })
  /** Every row the pane shows or scrolled away, as a person would count them (trailing blank rows dropped). */
  const rows = async (target: string): Promise<string[]> => {
    const text = await tmux('capture-pane', '-p', '-S', '-', '-E', '-', '-t', target)
    const lines = text.split('\n')
    while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop()
    return lines
  }
  // What a person types: the devnet from the checkout, no LOG_LEVEL or LOG_FORMAT of the test's own. Panes
  // stay open after their command ends (remain-on-exit), so its last words and exit status can be read.
  // What `make run` runs (`node node/bin.js devnet`, from source), with this test's Node: make's, by its
  // path when it lies in .toolchain/, as the banner's first command then names it too.
  // The pane's shell prints the command's exit status: tmux can mark a pane dead without ever reaping
  // its command (a zombie with no status), so its own pane_dead_status is not read.
  const devnet = `cd ${REPO} && env -u LOG_LEVEL -u LOG_FORMAT -u BWN_PORT -u BWN_DATA ${process.execPath} node/bin.js devnet --port 0 --data ${data}; echo "exit status $?"`
  await tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'keep', 'exec cat')
  await tmux('set-option', '-g', 'remain-on-exit', 'on')
  /** The exit status of a pane's command once it has ended (the shell's shell-style status: 128+n for signal n). */
  const exited = async (target: string): Promise<{ code: number, signal: null } | undefined> => {
    const m = /^exit status (\d+)$/m.exec((await rows(target)).join('\n'))
    return m === null ? undefined : { code: Number(m[1]), signal: null }
  }
  const start = async (name: string, command: string): Promise<{ started: number, banner: string[] }> => {
    const started = Date.now()
    await tmux('new-session', '-d', '-s', name, '-x', '400', '-y', '50', command)
    const banner = await eventually(async () => {
      const r = await rows(name)
      return r.some(l => l.startsWith('Ctrl-C stops it')) ? r : undefined
    }, START_MS, 'the banner')
    return { started, banner }
  }

  const first = await start('first', devnet)
  // Rows in the first 10 s (or more, where a loaded machine took longer to print the banner).
  let atWindow: string[] = []
  await eventually(async () => {
    atWindow = await rows('first')
    return Date.now() - first.started >= FIRST_WINDOW_MS
  }, FIRST_WINDOW_MS + 5_000, 'the first 10 s', 250)
  const file = JSON.parse(await readFile(join(data, 'devnet.json'), 'utf8'))
  const text = atWindow.join('\n')
  t.ok(atWindow.length <= MAX_LINES, `${atWindow.length} rows in the first ${Math.round((Date.now() - first.started) / 1000)} s (at most ${MAX_LINES}):\n${text}`)
  t.notMatch(text, /WARN|ERROR|FATAL|Error:|"level":[456]0/, 'no warning or error on a healthy start')
  for (const [what, url] of [['API', file.baseUrl], ['dashboard', `${file.dashboardUrl}/`], ['docs', `${file.baseUrl}/docs`], ['metrics', file.nodes[0].metricsUrl]]) {
    t.match(text, new RegExp(`^ +${what} +${url.replace(/[.?*+^$()[\]{}|\\/]/g, '\\$&')}`, 'm'), `${what} URL printed`)
  }
  t.match(text, new RegExp(`keys +${join(data, 'devnet.json')}`), 'where the keys are')
  t.match(text, new RegExp(`delivered +${file.sinkDir}`), 'where delivered files land')
  t.match(text, new RegExp(`logs +${join(data, 'devnet.log')}`), 'where the log is')
  const log = (await readFile(join(data, 'devnet.log'), 'utf8')).trim().split('\n').map(l => JSON.parse(l) as { level: number, msg: string })
  t.ok(log.some(l => l.msg === 'devnet ready'), `the whole log is in devnet.log (${log.length} lines)`)
  t.same(log.filter(l => l.level >= 40).map(l => l.msg), [], 'no warning in the log file either')
  t.equal(file.pid, Number((await readFile(join(data, 'devnet.pid'), 'utf8')).trim()), 'the pid file names the devnet')

  // The first command, exactly as printed, run from the checkout in a terminal of its own.
  const tryLine = atWindow.find(l => /^ +try +/.test(l))!.replace(/^ +try +/, '')
  t.match(tryLine, /transfer put README\.md --api http:\/\/127\.0\.0\.1:\d+ --key "\$\(node -p .*keys\.client.*\)"$/, 'one first command')
  await tmux('new-session', '-d', '-s', 'try', '-x', '400', '-y', '50', `cd ${REPO} && export BWN_STATE_DIR=${join(dir, 'state')} && ${tryLine}; echo "exit status $?"`)
  const tried = await eventually(async () => await exited('try'), START_MS, 'the printed command to finish')
  t.equal(tried.code, 0, `the printed command runs as printed:\n${(await rows('try')).slice(-15).join('\n')}`)
  t.same((await readFile(join(file.sinkDir, 'README.md'))).equals(await readFile(join(REPO, 'README.md'))), true, 'README.md delivered where the banner says')

  // A second devnet on the same data names the first; one on the first's port names --port.
  const second = await runCliOnce(['devnet', '--port', '0', '--data', data], { LOG_LEVEL: 'warn' })
  t.equal(second.code, 1, 'a second devnet on the same data exits 1')
  t.match(second.stderr, new RegExp(`in use by a running devnet \\(pid ${file.pid}, API ${file.baseUrl.replace(/[.]/g, '\\.')}\\)`), `names the first: ${second.stderr.trim()}`)
  t.ok(second.stderr.trim().split('\n').length <= 2, 'in a line or two')
  const port = new URL(file.baseUrl).port
  const taken = await runCliOnce(['devnet', '--port', port, '--data', join(dir, 'other')], { LOG_LEVEL: 'warn' })
  t.equal(taken.code, 1, 'a taken port exits 1')
  t.match(taken.stderr, new RegExp(`port ${port} .*taken.*--port.*BWN_PORT`), `names --port: ${taken.stderr.trim()}`)
  t.ok(taken.stderr.trim().split('\n').length <= 2, 'in a line or two')

  // Ctrl-C: SIGINT to the devnet, as the terminal sends it, then the same command again: the same keys,
  // organization and data. Sent to the pid the devnet wrote, so the pane's shell (which prints the exit
  // status) is not interrupted with it.
  const stopByCtrlC = async (name: string): Promise<void> => {
    const pid = Number((await readFile(join(data, 'devnet.pid'), 'utf8')).trim())
    process.kill(pid, 'SIGINT')
    const exit = await eventually(async () => await exited(name), STOP_MS, `${name} to stop`).catch(async (err: Error) => {
      throw new Error(`${err.message}:\n${(await rows(name)).slice(-15).join('\n')}`)
    })
    t.same(exit, { code: 0, signal: null }, 'SIGINT stops it with exit 0')
    await eventually(async () => await stat(join(data, 'devnet.pid')).then(() => false, () => true), STOP_MS, 'the devnet to remove its pid file as it stops')
    t.notMatch((await rows(name)).join('\n'), /WARN|ERROR|FATAL/, 'a quiet stop: no warning while the nodes shut down')
  }
  await stopByCtrlC('first')
  await tmux('kill-session', '-t', 'first')
  const again = await start('again', devnet)
  const file2 = JSON.parse(await readFile(join(data, 'devnet.json'), 'utf8'))
  t.same(file2.keys, file.keys, 'a restart on the same --data keeps every key')
  t.same(Object.keys(file.keys).sort(), ['admin', 'client', 'clientFree', 'console'])
  const orgs = await (await fetch(`${file2.baseUrl}/admin/organizations`, { headers: { authorization: `Bearer ${file2.keys.admin}` } })).json() as { items: unknown[] }
  t.equal(orgs.items.length, 1, 'one organization')
  t.notMatch(again.banner.join('\n'), /WARN|ERROR|FATAL/, 'a quiet restart too')
  await stopByCtrlC('again')
})
