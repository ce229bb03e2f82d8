// The web dashboard in a real browser: playwright-core driving Debian's Chromium (/usr/bin/chromium,
// installed by .ci/run) against a devnet. Log in with the devnet's keys, see the network numbers,
// start a transfer from the test and watch its progress bar reach 100 % without a reload (the
// WebSocket), open its audit rows. No request leaves the host (and the browser cannot resolve any
// other host), the page logs no console error, and screenshots are saved to test/artifacts/. The list
// shows size, rate and ETA; the charts' x axes have integer UID/epoch ticks and orchestrator labels;
// /docs and /redoc render with no console error (Content-Security-Policy violations included).
import t from 'tap'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { startTestDevnet, apiClient, sendChunks, testBytes } from '../helpers/devnet.ts'
import { REPO } from '../helpers/proc.ts'

export const CHROMIUM = process.env.BWN_CHROMIUM ?? '/usr/bin/chromium'
const ARTIFACTS = join(REPO, 'test', 'artifacts')
const SIZE = 40 * 1024 * 1024 // 3 chunks
const WAIT = 120_000

async function launch (): Promise<Browser> {
  return await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
      // Nothing but loopback resolves: no request can leave the host, whatever the page or the browser tries.
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
      '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-domain-reliability'
    ]
  })
}

t.test('dashboard: login, network numbers, live transfer progress to 100 %, audit rows', async t => {
  await mkdir(ARTIFACTS, { recursive: true })
  const net = await startTestDevnet(t, { workers: 3 })
  const browser = await launch()
  t.teardown(() => browser.close())
  const context = await browser.newContext({ viewport: { width: 1280, height: 1400 } })
  const page: Page = await context.newPage()

  const requests: string[] = []
  const consoleErrors: string[] = []
  page.on('request', r => requests.push(r.url()))
  page.on('websocket', ws => requests.push(ws.url()))
  page.on('console', m => { if (m.type() === 'error') consoleErrors.push(m.text()) })
  page.on('pageerror', e => consoleErrors.push(`pageerror: ${e.message}`))
  // Belt and braces: any request to another host is refused and recorded.
  const offHost: string[] = []
  await context.route('**/*', async route => {
    const u = new URL(route.request().url())
    if (u.hostname === '127.0.0.1') await route.continue()
    else { offHost.push(u.href); await route.abort() }
  })

  const res = await page.goto(net.file.dashboardUrl + '/')
  t.equal(res?.status(), 200, 'the dashboard answers at {dashboard_url}/')
  const csp = res?.headers()['content-security-policy'] ?? ''
  t.match(csp, /default-src 'none'/, 'strict CSP')
  t.match(csp, /script-src 'self'(;|$)/, 'scripts from this origin only, no inline')
  t.notMatch(csp, /unsafe-inline|unsafe-eval|https?:\/\/(?!127\.0\.0\.1)/, 'no unsafe source, no other host')
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-login.png') })

  // Log in by pasting keys; they land in sessionStorage only.
  await page.fill('#key-console', net.file.keys.console)
  await page.fill('#key-client', net.file.keys.client)
  await page.fill('#key-audit', net.file.keys.admin)
  await page.click('#login-form button[type=submit]')
  await page.waitForSelector('#main:not([hidden])')
  const stored = await page.evaluate(() => ({ session: Object.keys(sessionStorage).sort(), local: localStorage.length, cookie: document.cookie }))
  t.same(stored, { session: ['bwnet.key.audit', 'bwnet.key.client', 'bwnet.key.console'], local: 0, cookie: '' }, 'keys in sessionStorage only')

  // Network numbers, from the live stream.
  await page.waitForFunction(() => document.getElementById('n-verified')!.textContent!.includes('Mbit/s'), undefined, { timeout: WAIT })
  // A fresh devnet's first version may predate a worker's join; the next pushed version catches up.
  await page.waitForFunction(() => ['n-workers', 'n-orchestrators', 'n-validators'].map(id => document.getElementById(id)!.textContent).join() === '3,1,1', undefined, { timeout: WAIT }).catch(() => {})
  t.equal(await page.textContent('#n-workers'), '3', 'three workers')
  t.equal(await page.textContent('#n-orchestrators'), '1')
  t.equal(await page.textContent('#n-validators'), '1')
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-network.png'), fullPage: true })

  // A transfer started by the test appears, and its progress is followed without a reload.
  await page.evaluate(() => { (window as unknown as { marker: number }).marker = 42 })
  const api = apiClient(net.file.baseUrl, net.file.keys.client)
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: SIZE, filename: 'browser-secret-name.bin', tier: 'STANDARD' } })
  t.equal(created.status, 201)
  const id: string = created.body.id
  const row = `#transfer-rows tr[data-transfer-id="${id}"]`
  await page.waitForSelector(row, { timeout: WAIT })
  // Every state the row is painted in, recorded in the page as it happens (a MutationObserver: each
  // event is painted in its own task, so none is missed), bounded.
  // (A string, not a function: the test's TypeScript loader would name inner functions with a helper
  // that does not exist in the page.)
  await page.evaluate(`(() => {
    const sel = ${JSON.stringify(row)}
    window.rowStates = []
    const record = () => {
      const tr = document.querySelector(sel)
      if (tr === null || window.rowStates.length >= 10000) return
      const s = { pct: tr.getAttribute('data-pct'), rate: tr.querySelector('.rate').textContent, eta: tr.querySelector('.eta').textContent }
      const last = window.rowStates[window.rowStates.length - 1]
      if (last === undefined || last.pct !== s.pct || last.rate !== s.rate || last.eta !== s.eta) window.rowStates.push(s)
    }
    new MutationObserver(record).observe(document.getElementById('transfer-rows'), { subtree: true, childList: true, characterData: true, attributes: true })
    record()
  })()`)
  await sendChunks(api, created.body, testBytes(SIZE, 5))
  t.equal((await api(`/transfers/${id}/finalize`, { method: 'POST' })).status, 202)
  await page.waitForSelector(`${row}[data-status="completed"][data-pct="100"]`, { timeout: WAIT })
  const states = await page.evaluate(() => (window as unknown as { rowStates: Array<{ pct: string | null, rate: string, eta: string }> }).rowStates)
  const seen = new Set(states.map(s => s.pct))
  const moving = states.filter(s => Number(s.pct) > 0 && Number(s.pct) < 100)
  t.equal(await page.textContent(`${row} .pct`), '100 %', 'the progress bar reached 100 %')
  t.equal(await page.getAttribute(`${row} progress`, 'value'), '100')
  t.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 42, 'without a reload')
  t.ok(seen.size >= 2, `progress seen moving: ${[...seen].join(', ')} %`)
  t.notMatch(await page.textContent('#transfer-rows') ?? '', /browser-secret-name/, 'the list shows no display name')

  // Size, rate and time left in the list.
  t.same(await page.$$eval('#transfers thead th', ths => ths.map(th => th.textContent)).then(h => h.slice(3, 6)), ['Size', 'Rate', 'ETA'], 'size, rate and ETA columns')
  t.equal(await page.textContent(`${row} .size`), '40.0 MiB', 'the size column')
  await page.waitForFunction((sel) => /^\d+(\.\d)? (B|KiB|MiB|GiB)\/s$/.test(document.querySelector(sel)!.textContent!), `${row} .rate`, { timeout: WAIT })
  t.match(await page.textContent(`${row} .rate`), /^\d+(\.\d)? (B|KiB|MiB|GiB)\/s$/, 'a completed transfer shows its average rate')
  t.equal(await page.textContent(`${row} .eta`), 'done')
  t.match(await page.textContent(`${row} .created`), /^\d+ (s|min) ago$/, 'created, as a relative time')
  t.ok(moving.some(m => /^\d+(\.\d)? (B|KiB|MiB|GiB)\/s$/.test(m.rate) && /^\d+ s$|^\d+ min \d+ s$/.test(m.eta)), `a moving transfer shows a rate and an ETA: ${JSON.stringify(moving.slice(0, 4))}`)
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-transfer-100.png'), fullPage: true })

  // Drill-down: the owner's read (with its name) and the audit rows, by table, with paging.
  await page.click(row)
  await page.waitForSelector('#audit-tabs button', { timeout: WAIT })
  t.equal(await page.textContent('#detail-name'), 'browser-secret-name.bin', 'the owner sees the name of their own transfer')
  await page.click('#audit-tabs button[data-table="task_attempts"]')
  await page.waitForSelector('#audit-tabs button[data-table="task_attempts"][aria-selected="true"]')
  const attempts = await page.$$eval('#audit-table tbody tr', rows => rows.length)
  t.ok(attempts >= 3, `audit rows of task_attempts shown (${attempts})`)
  const headers = await page.$$eval('#audit-table thead th', ths => ths.map(th => th.textContent))
  t.ok(headers.includes('worker_id') && headers.includes('chunk_index'), 'attempt columns')
  t.notOk(headers.includes('transfer_id'), 'a column that only repeats the shown transfer is left out by default')
  // Column choice: the column comes back when chosen.
  await page.click('#audit-columns summary')
  await page.check('#audit-columns-list input[data-column="transfer_id"]')
  await page.waitForFunction(() => [...document.querySelectorAll('#audit-table thead th')].some(th => th.textContent === 'transfer_id'))
  const idCells = await page.$$eval('#audit-table tbody td.id', tds => tds.map(td => ({ text: td.textContent, title: td.getAttribute('title') })))
  t.ok(idCells.some(c => c.title === id && c.text === `${id.slice(0, 8)}…`), 'ids shortened, the full id in the tooltip')
  // Times as relative times, the exact one in the tooltip.
  const times = await page.$$eval('#audit-table tbody td.time', tds => tds.map(td => ({ text: td.textContent, title: td.getAttribute('title') })))
  t.ok(times.length > 0 && times.every(c => /^\d+ (s|min|h|d) ago$/.test(c.text!) && !Number.isNaN(Date.parse(c.title!))), `times shown relative (${times.length}: ${times[0]?.text})`)
  t.equal(await page.$$eval('#audit-table tbody td', tds => tds.filter(td => /browser-secret-name/.test(`${td.textContent} ${td.getAttribute('title') ?? ''}`)).length), 0, 'audit rows carry no display name')
  await page.selectOption('#audit-limit', '10')
  await page.waitForFunction(() => document.getElementById('audit-page')!.textContent!.startsWith('rows 1–'))
  t.ok(await page.isDisabled('#audit-prev'), 'first page: no previous')
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-audit.png'), fullPage: true })

  // Charts drawn by uPlot (served from this host) once epochs have closed (10 s devnet epochs).
  for (const chart of ['chart-epochs', 'chart-weights', 'chart-prism']) {
    await page.waitForSelector(`#${chart} .uplot canvas`, { timeout: WAIT })
    t.pass(`${chart} drawn`)
  }
  await page.screenshot({ path: join(ARTIFACTS, 'dashboard-epochs.png'), fullPage: true })

  // The x axes' tick labels as drawn (uPlot draws them on a canvas; the page keeps them in data-x-ticks).
  const ticks = async (chart: string): Promise<string[]> => JSON.parse(await (await page.waitForFunction((id) => document.getElementById(id)!.dataset.xTicks, chart, { timeout: WAIT })).jsonValue() as string)
  // Each axis spans the data (within one step), whatever it holds: one value at 0 once drew 0 to 100.
  const dataX = {
    'chart-weights': async () => ((await (await fetch(`${net.file.baseUrl}/chain/weights`)).json()) as { weights: Array<{ uids: number[] }> }).weights.flatMap(w => w.uids),
    'chart-epochs': async () => ((await (await fetch(`${net.file.baseUrl}/v1/telemetry/realtime/epochs?limit=100`, { headers: { 'x-api-key': net.file.keys.console } })).json()) as { items: Array<{ data: { epoch: number } }> }).items.map(i => i.data.epoch)
  }
  for (const [chart, read] of Object.entries(dataX)) {
    const labels = (await ticks(chart)).filter(l => l !== '')
    t.ok(labels.length > 0, `${chart}: ticks drawn (${labels.join(' ')})`)
    t.ok(labels.every(l => /^\d+$/.test(l)), `${chart}: every tick an integer`)
    const x = await read() // read after the ticks: holds at least what the chart drew
    const inside = labels.map(Number).every(v => v >= Math.min(...x) - 1 && v <= Math.max(...x) + 1)
    t.ok(inside, `${chart}: ticks ${labels.join(' ')} within the data's ${Math.min(...x)}–${Math.max(...x)} (±1)`)
  }
  const prism = await (await fetch(`${net.file.baseUrl}/chain/prism`)).json() as { scores: Array<{ hotkey: string }> }
  const orchestrators = await ticks('chart-prism')
  t.equal(orchestrators.length, prism.scores.length, 'one PRISM tick per orchestrator')
  t.ok(orchestrators.every((l, i) => l.startsWith(prism.scores[i]!.hotkey.slice(0, 5)) && l.endsWith(prism.scores[i]!.hotkey.slice(-4))), `orchestrators labelled by hotkey: ${orchestrators.join(' ')}`)

  t.same(offHost, [], 'no request to another host')
  t.ok(requests.length > 5, `${requests.length} requests recorded`)
  t.same(requests.filter(u => new URL(u).hostname !== '127.0.0.1'), [], 'every request, WebSockets included, went to 127.0.0.1')
  t.ok(requests.some(u => u.startsWith('ws://127.0.0.1') && u.includes(`/transfers/${id}/events`)), 'progress came over the events WebSocket')
  t.same(consoleErrors, [], 'no console error')

  // The API's documentation pages, from the same origin: they render and log no error (CSP included).
  for (const [path, ready] of [['/docs', '.swagger-ui .opblock-summary'], ['/redoc', '.api-content h2']] as const) {
    const docs = await context.newPage()
    const errors: string[] = []
    docs.on('console', m => { if (m.type() === 'error') errors.push(m.text()) })
    docs.on('pageerror', e => errors.push(`pageerror: ${e.message}`))
    t.equal((await docs.goto(net.file.baseUrl + path))?.status(), 200, `${path} answers`)
    await docs.waitForSelector(ready, { timeout: WAIT })
    if (path === '/docs') {
      await docs.click('.swagger-ui .opblock-summary >> nth=0')
      await docs.waitForSelector('.swagger-ui .opblock-body', { timeout: WAIT })
    }
    await docs.screenshot({ path: join(ARTIFACTS, `api${path.replace('/', '-')}.png`) })
    t.same(errors, [], `${path}: no console error`)
    await docs.close()
  }
  t.same(offHost, [], 'the documentation pages asked no other host')
  t.comment(`screenshots in ${ARTIFACTS}`)
})
