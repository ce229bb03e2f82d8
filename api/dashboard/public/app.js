// bwnet dashboard: plain script (no build step, no inline code: the page's CSP allows only files from
// this origin). Keys live in sessionStorage; every number comes from the node's API.
'use strict'
;(() => {
  const $ = (id) => document.getElementById(id)
  const KEYS = { console: 'bwnet.key.console', client: 'bwnet.key.client', audit: 'bwnet.key.audit' }
  const TERMINAL = new Set(['completed', 'failed', 'cancelled'])
  const PAGE = 20
  const LIST_REFRESH_MS = 2000
  const EPOCHS_REFRESH_MS = 10000 // one devnet epoch; each refresh is one paid realtime/epochs read
  const wsBase = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}`

  const state = { node: null, transfersOffset: 0, total: 0, sockets: new Map(), rows: new Map(), detail: null, audit: { table: null, offset: 0 }, stream: null, timer: null, epochTimer: null, charts: new Map() }
  const key = (k) => sessionStorage.getItem(KEYS[k]) || ''

  // ---- helpers --------------------------------------------------------------------------------------
  function el (tag, props = {}, ...children) {
    const e = document.createElement(tag)
    for (const [k, v] of Object.entries(props)) {
      if (k === 'class') e.className = v
      else if (k === 'dataset') Object.assign(e.dataset, v)
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v)
      else e.setAttribute(k, v)
    }
    for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)))
    return e
  }
  const fmtBytes = (n) => {
    if (!Number.isFinite(n)) return '–'
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
    let i = 0
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++ }
    return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`
  }
  const pctOf = (t) => t.status === 'completed' ? 100 : t.bytes.total === 0 ? 0 : Math.floor(100 * t.bytes.delivered / t.bytes.total)
  class ApiError extends Error { constructor (status, problem) { super(problem.detail || `HTTP ${status}`); this.status = status; this.code = problem.code } }

  /** GET (or other) on this node with one of the keys; a problem+json answer becomes an ApiError. */
  async function api (path, which, opts = {}) {
    const headers = { accept: 'application/json' }
    const k = which === null ? '' : key(which)
    if (k) headers[which === 'console' ? 'x-api-key' : 'authorization'] = which === 'console' ? k : `Bearer ${k}`
    const res = await fetch(path, { ...opts, headers: { ...headers, ...(opts.headers || {}) } })
    const body = res.status === 204 ? null : await res.json().catch(() => ({}))
    if (!res.ok) throw new ApiError(res.status, body || {})
    return body
  }

  /** A live socket with the key as a subprotocol (browsers cannot set headers on a WebSocket). */
  function live (path, which) {
    return new WebSocket(wsBase + path, ['bwnet.v1', `bwnet.key.${key(which)}`])
  }

  // ---- login ----------------------------------------------------------------------------------------
  function showLoggedIn (on) {
    $('login').hidden = on
    $('main').hidden = !on
    $('logout').hidden = !on
  }

  $('login-form').addEventListener('submit', (ev) => {
    ev.preventDefault()
    const values = { console: $('key-console').value.trim(), client: $('key-client').value.trim(), audit: $('key-audit').value.trim() }
    if (!values.console && !values.client) { $('login-error').textContent = 'Paste at least a console key or a client key.'; return }
    for (const [k, v] of Object.entries(values)) { if (v) sessionStorage.setItem(KEYS[k], v); else sessionStorage.removeItem(KEYS[k]) }
    for (const id of ['key-console', 'key-client', 'key-audit']) $(id).value = ''
    $('login-error').textContent = ''
    start()
  })

  $('logout').addEventListener('click', () => {
    for (const k of Object.values(KEYS)) sessionStorage.removeItem(k)
    stop()
    showLoggedIn(false)
  })

  function stop () {
    if (state.timer) clearInterval(state.timer)
    if (state.epochTimer) clearInterval(state.epochTimer)
    state.timer = null
    state.epochTimer = null
    if (state.stream) state.stream.close(1000)
    state.stream = null
    for (const s of state.sockets.values()) s.ws.close(1000)
    state.sockets.clear()
    state.rows.clear()
    $('transfer-rows').replaceChildren()
    $('detail').hidden = true
  }

  async function start () {
    showLoggedIn(true)
    try {
      const health = await api('/health', null)
      state.node = health.node
      $('node').textContent = `${health.node.role} ${health.node.hotkey}`
      setCounts(health.nodes)
    } catch (err) { $('network-note').textContent = `Node unavailable: ${err.message}` }
    startNetwork()
    refreshTransfers()
    state.timer = setInterval(refreshTransfers, LIST_REFRESH_MS)
    loadEpochs()
    state.epochTimer = setInterval(loadEpochs, EPOCHS_REFRESH_MS)
  }

  // ---- network summary ------------------------------------------------------------------------------
  function setCounts (c) {
    $('n-workers').textContent = c.worker ?? c.workerCount ?? '–'
    $('n-orchestrators').textContent = c.orchestrator ?? c.orchestratorCount ?? '–'
    $('n-validators').textContent = c.validator ?? c.validatorCount ?? '–'
  }

  function startNetwork () {
    if (!key('console')) { $('network-note').textContent = 'Node counts from /health; log in with a console key for the live network summary.'; return }
    const ws = live('/v1/telemetry/realtime/stream', 'console')
    state.stream = ws
    ws.addEventListener('message', (m) => {
      const msg = JSON.parse(m.data)
      const d = msg.envelope.data
      setCounts(d)
      const verified = (d.workloads || []).reduce((s, w) => s + (w.verifiedBandwidthMbps || 0), 0)
      $('n-verified').textContent = `${verified.toFixed(1)} Mbit/s`
      $('n-completed').textContent = d.completedTransfers
      $('n-bytes').textContent = fmtBytes(d.transferredBytes)
      $('net-version').textContent = `live version ${msg.snapshotId.slice(0, 8)} · ${msg.charged} credits per update · ${msg.remaining} left`
      $('network-note').textContent = ''
    })
    ws.addEventListener('close', (ev) => {
      if (state.stream !== ws) return
      state.stream = null
      $('network-note').textContent = ev.code === 4402 ? 'Live updates stopped: the organization has no credits left.' : `Live updates stopped (${ev.code} ${ev.reason}).`
    })
  }

  // ---- transfers ------------------------------------------------------------------------------------
  async function refreshTransfers () {
    if (!key('client')) { $('transfers-note').textContent = 'Log in with a client key to see your transfers.'; return }
    let page
    try { page = await api(`/transfers?limit=${PAGE}&offset=${state.transfersOffset}`, 'client') } catch (err) { $('transfers-note').textContent = err.message; return }
    state.total = page.total
    $('transfers-note').textContent = page.total === 0 ? 'No transfers yet.' : ''
    $('transfers-page').textContent = page.total === 0 ? '' : `${state.transfersOffset + 1}–${state.transfersOffset + page.items.length} of ${page.total}`
    $('transfers-prev').disabled = state.transfersOffset === 0
    $('transfers-next').disabled = state.transfersOffset + PAGE >= page.total
    const body = $('transfer-rows')
    const ids = new Set(page.items.map(t => t.id))
    for (const [id, row] of state.rows) if (!ids.has(id)) { row.tr.remove(); state.rows.delete(id) }
    page.items.forEach((t, i) => {
      let row = state.rows.get(t.id)
      if (!row) { row = makeRow(t); state.rows.set(t.id, row) }
      if (body.children[i] !== row.tr) body.insertBefore(row.tr, body.children[i] || null)
      // The socket is the source of progress once open; the list fills in what it has not said.
      if (!state.sockets.has(t.id) || (row.seq === 0)) paint(row, t)
      if (!TERMINAL.has(t.status) && !state.sockets.has(t.id)) follow(t.id, row)
    })
  }

  function makeRow (t) {
    const tr = el('tr', { dataset: { transferId: t.id }, onclick: () => openDetail(t.id) })
    const cells = { status: el('td', { class: 'status' }), progress: el('progress', { max: '100', value: '0' }), pct: el('span', { class: 'pct' }), size: el('td', { class: 'size num' }), rate: el('td', { class: 'rate num' }), eta: el('td', { class: 'eta num' }), chunks: el('td', { class: 'chunks' }), created: el('td', { class: 'created', title: new Date(t.created_at).toLocaleString() }) }
    tr.append(el('td', {}, el('code', {}, t.id)), cells.status, el('td', {}, cells.progress, ' ', cells.pct), cells.size, cells.rate, cells.eta, cells.chunks, cells.created)
    return { tr, cells, seq: 0, status: t.status, createdAt: t.created_at, samples: [], movedAt: 0 }
  }

  /** "12 s ago", "3 min ago", "2 h ago", "4 d ago". */
  function ago (iso) {
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000))
    return s < 60 ? `${s} s ago` : s < 3600 ? `${Math.floor(s / 60)} min ago` : s < 86400 ? `${Math.floor(s / 3600)} h ago` : `${Math.floor(s / 86400)} d ago`
  }
  const fmtRate = (bps) => `${fmtBytes(bps)}/s`
  const fmtDuration = (s) => s < 60 ? `${Math.ceil(s)} s` : s < 3600 ? `${Math.floor(s / 60)} min ${Math.ceil(s % 60)} s` : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`

  /**
   * Delivery rate and time left. While a transfer moves: delivered bytes over the last RATE_WINDOW_MS
   * of its changes, timed by the server (an event's `at`, a list item's `updated_at`); none once nothing
   * has moved for that long. Once completed: its average, total size over completion − creation.
   */
  const RATE_WINDOW_MS = 10000
  function speed (row, t) {
    const completedAt = t.completed_at ?? (t.status === 'completed' ? t.at : null)
    if (t.status === 'completed') {
      const s = completedAt ? (Date.parse(completedAt) - Date.parse(row.createdAt)) / 1000 : 0
      return { rate: s > 0 ? t.bytes.total / s : null, eta: 0 }
    }
    if (TERMINAL.has(t.status)) return { rate: null, eta: null }
    const at = Date.parse(t.at ?? t.updated_at)
    const last = row.samples[row.samples.length - 1]
    if (Number.isFinite(at) && (!last || (t.bytes.delivered > last.delivered && at >= last.at))) {
      row.samples.push({ at, delivered: t.bytes.delivered })
      row.movedAt = performance.now()
    }
    while (row.samples.length > 2 && row.samples[1].at < at - RATE_WINDOW_MS) row.samples.shift()
    if (row.samples.length < 2 || performance.now() - row.movedAt > RATE_WINDOW_MS) return { rate: null, eta: null }
    const first = row.samples[0]
    const end = row.samples[row.samples.length - 1]
    const rate = end.at > first.at ? (end.delivered - first.delivered) * 1000 / (end.at - first.at) : null
    return { rate, eta: rate ? (t.bytes.total - t.bytes.delivered) / rate : null }
  }

  function paint (row, t) {
    row.status = t.status
    row.cells.status.textContent = t.status
    row.cells.status.className = `status status-${t.status}`
    const pct = pctOf(t)
    row.cells.progress.value = pct
    row.cells.pct.textContent = `${pct} %`
    row.cells.size.textContent = fmtBytes(t.bytes.total)
    const { rate, eta } = speed(row, t)
    row.cells.rate.textContent = rate === null ? '–' : fmtRate(rate)
    row.cells.eta.textContent = t.status === 'completed' ? 'done' : eta === null ? '–' : fmtDuration(eta)
    row.cells.chunks.textContent = `${t.chunks.received} / ${t.chunks.delivered} / ${t.chunks.verified} of ${t.chunks.total}`
    row.cells.created.textContent = ago(row.createdAt)
    row.tr.dataset.status = t.status
    row.tr.dataset.pct = String(pct)
  }

  /** Follows one transfer's events (resuming with ?after=) until its terminal status. */
  function follow (id, row) {
    const ws = live(`/transfers/${id}/events?after=${row.seq}`, 'client')
    state.sockets.set(id, { ws })
    ws.addEventListener('message', (m) => {
      const e = JSON.parse(m.data)
      if (e.seq <= row.seq) return
      row.seq = e.seq
      paint(row, e)
      if (state.detail === id) paintDetailProgress(e)
    })
    ws.addEventListener('close', () => {
      if (state.sockets.get(id)?.ws === ws) state.sockets.delete(id)
      // Not over (dropped, or 1013): the next list refresh reconnects with ?after=.
    })
  }

  $('transfers-prev').addEventListener('click', () => { state.transfersOffset = Math.max(0, state.transfersOffset - PAGE); refreshTransfers() })
  $('transfers-next').addEventListener('click', () => { state.transfersOffset += PAGE; refreshTransfers() })

  // ---- drill-down: the transfer and its audit rows ----------------------------------------------------
  function field (label, value, id) {
    const dd = el('dd', id ? { id } : {}, value)
    return el('div', {}, el('dt', {}, label), dd)
  }

  async function openDetail (id) {
    state.detail = id
    state.audit = { table: null, offset: 0 }
    $('detail').hidden = false
    $('detail-id').textContent = id
    $('detail-fields').replaceChildren()
    try {
      // The owner's own read: the display name is shown here (lists and audit rows never carry it).
      const t = await api(`/transfers/${id}`, 'client')
      $('detail-fields').append(
        field('Name', t.transfer_name ?? '–', 'detail-name'), field('Status', t.status, 'detail-status'), field('Progress', `${pctOf(t)} %`, 'detail-pct'),
        field('Size', fmtBytes(t.total_size)), field('Chunks', `${t.total_chunks} × ${fmtBytes(t.chunk_size)}`), field('Tier', t.tier), field('Destination', t.destination_id))
    } catch (err) { $('detail-fields').append(field('Error', err.message)) }
    await loadAudit()
    $('detail').scrollIntoView({ block: 'nearest' })
  }

  function paintDetailProgress (e) {
    if ($('detail-status')) $('detail-status').textContent = e.status
    if ($('detail-pct')) $('detail-pct').textContent = `${pctOf(e)} %`
  }

  async function loadAudit () {
    const id = state.detail
    const note = $('audit-note')
    if (!key('audit')) { note.textContent = 'Log in with an audit key (admin or orchestrator) to see the audit rows.'; return }
    if (!state.node) return
    const limit = Number($('audit-limit').value)
    let res
    try {
      res = await api(`/api/audit/orchestrator/${encodeURIComponent(state.node.hotkey)}/transfers/${id}?limit=${limit}&offset=${state.audit.offset}`, 'audit')
    } catch (err) { note.textContent = err.message; return }
    if (state.detail !== id) return
    const tables = Object.keys(res.pagination.tables)
    state.audit.table ??= tables.find(t => res.pagination.tables[t].returned > 0) ?? tables[0]
    note.textContent = ''
    $('audit-tabs').replaceChildren(...tables.map(name => {
      const p = res.pagination.tables[name]
      return el('button', { type: 'button', 'aria-selected': String(name === state.audit.table), dataset: { table: name }, onclick: () => { state.audit.table = name; loadAudit() } }, `${name} (${p.returned}${p.has_more ? '+' : ''})`)
    }))
    const rows = res[state.audit.table] || []
    const all = [...new Set(rows.flatMap(r => Object.keys(r)))]
    const columns = all.filter(c => shownColumn(state.audit.table, c, rows, id))
    $('audit-columns-list').replaceChildren(...all.map(c => el('label', {},
      el('input', { type: 'checkbox', ...(columns.includes(c) ? { checked: '' } : {}), dataset: { column: c }, onchange: (ev) => { chooseColumn(state.audit.table, c, ev.target.checked); loadAudit() } }), ` ${c}`)))
    $('audit-table').tHead.replaceChildren(el('tr', {}, ...columns.map(c => el('th', {}, c))))
    $('audit-table').tBodies[0].replaceChildren(...rows.map(r => el('tr', {}, ...columns.map(c => auditCell(r[c])))))
    const p = res.pagination.tables[state.audit.table]
    $('audit-page').textContent = rows.length === 0 ? 'no rows' : `rows ${p.offset + 1}–${p.offset + p.returned}`
    $('audit-prev').disabled = state.audit.offset === 0
    // Offsets are per table and shared by the request: the next page follows the shown table.
    $('audit-next').disabled = !p.has_more
  }

  // Columns of an audit table: the user's choice for that table, else all but the ones that only
  // repeat the transfer being shown (its id in every row).
  const chosenColumns = new Map() // table → Map(column → shown)
  function shownColumn (table, column, rows, transferId) {
    const chosen = chosenColumns.get(table)?.get(column)
    if (chosen !== undefined) return chosen
    return !(rows.length > 0 && rows.every(r => r[column] === transferId))
  }
  function chooseColumn (table, column, shown) {
    if (!chosenColumns.has(table)) chosenColumns.set(table, new Map())
    chosenColumns.get(table).set(column, shown)
  }

  // A cell: times as "12 s ago" and ids shortened (the full value in the tooltip), objects as JSON.
  const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
  function auditCell (v) {
    if (v === null || v === undefined) return el('td', {})
    if (typeof v === 'object') return el('td', {}, JSON.stringify(v))
    const text = String(v)
    if (ISO_TIME.test(text)) return el('td', { class: 'time', title: text }, ago(text))
    if (UUID.test(text)) return el('td', { class: 'id', title: text }, `${text.slice(0, 8)}…`)
    if (text.length > 24) return el('td', { class: 'long', title: text }, `${text.slice(0, 12)}…${text.slice(-6)}`)
    return el('td', {}, text)
  }

  $('audit-prev').addEventListener('click', () => { state.audit.offset = Math.max(0, state.audit.offset - Number($('audit-limit').value)); loadAudit() })
  $('audit-next').addEventListener('click', () => { state.audit.offset += Number($('audit-limit').value); loadAudit() })
  $('audit-limit').addEventListener('change', () => { state.audit.offset = 0; loadAudit() })
  $('detail-close').addEventListener('click', () => { state.detail = null; $('detail').hidden = true })

  // ---- epochs, weights, PRISM -----------------------------------------------------------------------
  // Ticks on the x axis: whole numbers (UIDs, epochs) or one label per category (orchestrators). The
  // labels drawn are also kept on the chart's node (data-x-ticks), readable where the canvas is not.
  const INTEGER_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000]
  function xAxis (node, opts) {
    const shown = (labels) => { node.dataset.xTicks = JSON.stringify(labels); return labels }
    const axis = { label: opts.xLabel || '' }
    if (opts.categories) {
      axis.splits = () => opts.categories.map((_, i) => i)
      axis.values = (_u, splits) => shown(splits.map(i => opts.categories[i] ?? ''))
    } else if (opts.integer) {
      axis.incrs = INTEGER_INCRS
      axis.values = (_u, splits) => shown(splits.map(v => Number.isInteger(v) && v >= 0 ? String(v) : '')) // UIDs and epochs are never negative
    }
    return axis
  }

  function xRange (x) {
    const lo = Math.min(...x)
    const hi = Math.max(...x)
    return lo === hi ? [lo - 1, hi + 1] : [lo - 0.5, hi + 0.5]
  }

  function chart (target, title, x, series, opts = {}) {
    const node = $(target)
    state.charts.get(target)?.destroy()
    state.charts.delete(target)
    node.replaceChildren()
    delete node.dataset.xTicks
    if (x.length === 0) { node.append(el('p', { class: 'note' }, 'No data yet.')); return }
    const colors = ['#1f6feb', '#1a7f37', '#bf8700', '#cf222e', '#8250df']
    const plot = new window.uPlot({
      width: 420, height: 220, title,
      // The x range from the data itself: uPlot widens a single value before a range function sees it
      // (one point at 0 became an axis from 0 to 100). Half a step of margin, one for a single point.
      // The y range starts at 0 and is never empty (all zeros: 0 to 1).
      scales: {
        x: { time: false, range: () => xRange(x) },
        y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] }
      },
      axes: [xAxis(node, opts), {}],
      series: [{ label: opts.xLabel || 'x', value: opts.categories ? (_u, i) => i === null ? '–' : opts.categories[i] ?? '–' : undefined }, ...series.map((s, i) => ({ label: s.label, stroke: colors[i % colors.length], width: 2, points: { show: true, size: 6 }, paths: opts.bars ? window.uPlot.paths.bars({ size: [0.6, 40] }) : undefined, fill: opts.bars ? colors[i % colors.length] + '55' : undefined }))]
    }, [x, ...series.map(s => s.values)], node)
    state.charts.set(target, plot)
  }

  /** An orchestrator's label on the PRISM chart: its hotkey, shortened (the full one is in the tooltip). */
  const shortKey = (hotkey) => hotkey.length > 12 ? `${hotkey.slice(0, 5)}…${hotkey.slice(-4)}` : hotkey

  async function loadEpochs () {
    const notes = []
    if (key('console')) {
      try {
        const page = await api('/v1/telemetry/realtime/epochs?limit=100', 'console')
        const items = page.items.map(i => i.data).sort((a, b) => a.epoch - b.epoch)
        chart('chart-epochs', 'Epochs', items.map(d => d.epoch), [
          { label: 'contributing orchestrators', values: items.map(d => d.contributingOrchestratorCount) },
          { label: 'sum of final shares', values: items.map(d => d.sumFinalShare) }
        ], { xLabel: 'epoch', integer: true })
      } catch (err) { notes.push(`epochs: ${err.message}`) }
    } else notes.push('Log in with a console key for the closed epochs.')
    try {
      const w = await api('/chain/weights', null)
      const byUid = new Map()
      for (const rec of w.weights) rec.uids.forEach((uid, i) => byUid.set(uid, (byUid.get(uid) || 0) + rec.weights[i] / 65535))
      const uids = [...byUid.keys()].sort((a, b) => a - b)
      chart('chart-weights', `Weights, epoch ${w.epoch}`, uids, [{ label: 'weight (normalized, summed over validators)', values: uids.map(u => byUid.get(u)) }], { xLabel: 'UID', bars: true, integer: true })
    } catch (err) { notes.push(`weights: ${err.message}`) }
    try {
      const p = await api('/chain/prism', null)
      const scores = p.scores
      chart('chart-prism', p.epoch === null ? 'PRISM (none published yet)' : `PRISM, epoch ${p.epoch}`, scores.map((_, i) => i), [
        { label: 'routing score', values: scores.map(s => s.routingScore) },
        { label: 'final score', values: scores.map(s => s.finalScore) }
      ], { xLabel: 'orchestrator', bars: true, categories: scores.map(s => shortKey(s.hotkey)) })
      $('chart-prism').title = scores.map(s => `${s.hotkey} (${s.pool})`).join('\n')
    } catch (err) { notes.push(`PRISM: ${err.message}`) }
    $('epochs-note').textContent = notes.join(' ')
  }

  // ---- sell allowance -------------------------------------------------------------------------------
  $('sell-form').addEventListener('submit', async (ev) => {
    ev.preventDefault()
    const hotkey = $('sell-hotkey').value.trim()
    $('sell-fields').replaceChildren()
    if (!key('console')) { $('sell-note').textContent = 'Log in with a console key (organization grant) to read sell allowances.'; return }
    if (!/^[1-9A-HJ-NP-Za-km-z]{46,48}$/.test(hotkey)) { $('sell-note').textContent = 'Not an SS58 hotkey.'; return }
    try {
      const env = await api(`/v1/telemetry/sell-allowance/${hotkey}`, 'console')
      const s = env.data.sellAllowance
      $('sell-note').textContent = `Epoch ${env.data.epoch}, UID ${env.data.uid}`
      const alpha = (rao) => `${(Number(rao) / 1e9).toFixed(4)} α`
      $('sell-fields').append(field('Transferable', alpha(s.transferableAlphaRao)), field('Sell multiplier', s.sellMultiplier), field('Sales (7 d)', s.sales7d),
        field('Sold (7 d)', alpha(s.soldAlpha7dRao)), field('Sell debt', alpha(s.sellDebtAlphaRao)), field('Next penalty-free sale', s.nextPenaltyFreeSaleEstimatedAt))
    } catch (err) { $('sell-note').textContent = err.status === 404 ? 'No sell-allowance proof for this hotkey yet.' : err.message }
  })

  // ---- boot -----------------------------------------------------------------------------------------
  if (key('console') || key('client')) start(); else showLoggedIn(false)
})()
