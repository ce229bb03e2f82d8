// PeerAuth's synchronous choice (`allows`): a connected, registered validator stays choosable across
// cache expiries (the last known standing while a refresh runs), and a revocation is seen after the
// refresh. On a manual clock, with a chain whose answers the test sets and whose lookups it counts.
import t from 'tap'
import { pino } from 'pino'
import { PeerAuth, STANDING_TTL_MS, ATTACHMENT_WAIT_MS } from '../../node/peer-auth.ts'
import { cryptoReady, newHotkey, signAttachment } from '../../protocol/index.ts'
import { ManualClock } from '../helpers/clock.ts'
import type { Chain, Standing } from '../../actors/chain/index.ts'
import type { Messenger } from '../../node/messenger.ts'

const VALIDATOR = '5ValidatorHotkeyForPeerAuthTest'

function setup () {
  const clock = new ManualClock()
  const standings = new Map<string, Standing | null>([[VALIDATOR, { hotkey: VALIDATOR, uid: 3, role: 'validator', registeredAtBlock: 1, stakeRao: 10n ** 12n, validatorPermit: true }]])
  let lookups = 0
  let gate: Promise<void> = Promise.resolve()
  const chain = { standing: async (h: string) => { lookups++; await gate; return standings.get(h) ?? null } } as unknown as Chain
  const auth = new PeerAuth({ self: { hotkey: '5Self', role: 'orchestrator' }, clock, logger: pino({ level: 'silent' }), messenger: { on () {} } as unknown as Messenger })
  auth.useChain(chain)
  return { clock, auth, standings, lookups: () => lookups, hold: () => { let open!: () => void; gate = new Promise(r => { open = r }); return open } }
}

const settle = async (): Promise<void> => { for (let i = 0; i < 5; i++) await new Promise(setImmediate) }

t.test('never looked up: not allowed now, one lookup started, allowed once it answers', async t => {
  const s = setup()
  t.equal(s.auth.allows(VALIDATOR, 'validator'), false)
  t.equal(s.auth.allows(VALIDATOR, 'validator'), false, 'asked again while the lookup runs')
  t.equal(s.lookups(), 1, 'one lookup for both asks')
  await settle()
  t.equal(s.auth.allows(VALIDATOR, 'validator'), true)
})

t.test('an expired standing stays usable while it is refreshed; a revocation lands with the refresh', async t => {
  const s = setup()
  await s.auth.standing(VALIDATOR)
  t.equal(s.lookups(), 1)
  s.clock.advance(STANDING_TTL_MS + 1)
  t.equal(s.auth.cached(VALIDATOR), undefined, 'the cache entry expired')
  const open = s.hold()
  s.standings.set(VALIDATOR, null) // deregistered on the chain
  t.equal(s.auth.allows(VALIDATOR, 'validator'), true, 'last known standing while the refresh runs')
  t.equal(s.lookups(), 2, 'a refresh started')
  open()
  await settle()
  t.equal(s.auth.allows(VALIDATOR, 'validator'), false, 'the refreshed standing decides')
  t.equal(s.lookups(), 2, 'a fresh answer needs no lookup')
})

t.test('a failed refresh keeps the last known standing', async t => {
  const s = setup()
  await s.auth.standing(VALIDATOR)
  s.clock.advance(STANDING_TTL_MS + 1)
  s.auth.useChain({ standing: async () => { throw new Error('chain host unreachable') } } as unknown as Chain)
  t.equal(s.auth.allows(VALIDATOR, 'validator'), true)
  await settle()
  t.equal(s.auth.allows(VALIDATOR, 'validator'), true, 'still the last known standing')
})

t.test('a worker announce held while its standing is read is decided after the re-announce that carries its attachment', async t => {
  await cryptoReady()
  const clock = new ManualClock()
  const orchestrator = newHotkey()
  const worker = newHotkey().address
  let openWorkerLookup!: () => void
  const workerLookup = new Promise<void>(resolve => { openWorkerLookup = resolve })
  // The chain knows the orchestrator; the worker holds no registration, and its first lookup is slow (as a
  // node's first requests to its chain host are while the connection comes up).
  const chain = {
    standing: async (h: string) => {
      if (h === orchestrator.address) return { hotkey: h, uid: 1, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false }
      await workerLookup
      return null
    }
  } as unknown as Chain
  const handlers = new Map<string, Array<(msg: any, peer: string) => void>>()
  const refused: string[] = []
  const messenger = {
    on (type: string, h: (msg: any, peer: string) => void) { handlers.set(type, [...handlers.get(type) ?? [], h]) },
    admit () {}, refuse (from: string) { refused.push(from) }, penalize () {}, send () { return true }
  } as unknown as Messenger
  const auth = new PeerAuth({ self: { hotkey: newHotkey().address, role: 'worker' }, clock, logger: pino({ level: 'silent' }), messenger })
  auth.useChain(chain)
  const delivered: string[] = []
  auth.on('announce', 'registered', (msg) => { delivered.push(msg.from) })
  const announce = (body: Record<string, unknown>): void => {
    for (const h of handlers.get('announce') ?? []) h({ type: 'announce', from: worker, body: { role: 'worker', hotkey: worker, attachTo: null, ...body } }, 'peer')
  }
  announce({}) // before the worker was attached
  await settle()
  announce({ attachment: signAttachment(orchestrator, { worker, issuedAt: clock.now() }) }) // attached: it announces again
  await settle()
  openWorkerLookup()
  await settle()
  clock.advance(ATTACHMENT_WAIT_MS) // however long the first announce waited for its attachment
  await settle()
  t.same(refused, [], 'the worker is not refused')
  t.same(delivered, [worker, worker], 'both announces delivered')
})

t.test('asks for one hotkey while its lookup runs share it; a change meanwhile starts a fresh one', async t => {
  const s = setup()
  const open = s.hold()
  // A burst of verify requests naming one worker: one question to the chain, every caller answered.
  const answers = Promise.all(Array.from({ length: 200 }, async () => await s.auth.standing(VALIDATOR)))
  t.equal(s.lookups(), 1, '200 concurrent asks, one lookup')
  open()
  const got = await answers
  t.ok(got.every(w => w?.uid === 3), 'every caller gets the answer')
  t.equal(s.auth.cached(VALIDATOR)?.uid, 3, 'and it is cached')

  // Deregistered and forgotten while a lookup runs, and that lookup answers last: a caller after the
  // change never gets the old answer, and the old answer is not cached over the new one.
  const answers2: Array<(w: Standing | null) => void> = []
  const slow = { standing: async () => await new Promise<Standing | null>(resolve => { answers2.push(resolve) }) } as unknown as Chain
  s.auth.useChain(slow)
  s.clock.advance(STANDING_TTL_MS + 1)
  const before = s.auth.standing(VALIDATOR)
  s.auth.forget(VALIDATOR)
  const after = s.auth.standing(VALIDATOR)
  t.equal(answers2.length, 2, 'the ask after forget() did not join the lookup begun before it')
  answers2[1]!(null) // the new lookup: deregistered
  t.equal(await after, null, 'the later ask sees the change')
  answers2[0]!({ hotkey: VALIDATOR, uid: 3, role: 'validator', registeredAtBlock: 1, stakeRao: 10n ** 12n, validatorPermit: true })
  t.equal((await before)?.uid, 3, 'the earlier ask gets what the chain said when it was asked')
  await settle()
  t.equal(s.auth.cached(VALIDATOR), null, 'the answer begun before the change is not cached over it')
})

t.test('two hotkeys holding attachments issued by each other: a lookup of either ends (issuers are read from their registration only)', async t => {
  await cryptoReady()
  const clock = new ManualClock()
  const a = newHotkey()
  const b = newHotkey()
  const registered = new Set([a.address, b.address])
  const chain = {
    standing: async (h: string) => registered.has(h) ? { hotkey: h, uid: h === a.address ? 1 : 2, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false } : null
  } as unknown as Chain
  const auth = new PeerAuth({ self: { hotkey: newHotkey().address, role: 'validator' }, clock, logger: pino({ level: 'silent' }), messenger: { on () {} } as unknown as Messenger })
  auth.useChain(chain)
  // While both are registered, each presents an attachment the other issued: both are held.
  t.ok((await auth.present(signAttachment(b, { worker: a.address, issuedAt: clock.now() }), a.address)).ok)
  t.ok((await auth.present(signAttachment(a, { worker: b.address, issuedAt: clock.now() }), b.address)).ok)
  // Both deregister; once the cache expires, a lookup of one reads the other's standing as an issuer.
  registered.clear()
  clock.advance(STANDING_TTL_MS + 1)
  const ended = await Promise.race([
    auth.standing(a.address).then(w => ({ w })),
    (async () => { await settle(); await settle(); return 'hung' as const })()
  ])
  t.not(ended, 'hung', 'the lookup ends')
  t.same(ended, { w: null }, 'neither holds a registration, so neither attachment stands')
  t.equal(await auth.standing(b.address), null, 'and the other one ends too')
})

t.test('the same attachment presented again keeps the worker\'s standing: no lookup per presentation', async t => {
  await cryptoReady()
  const s = setup()
  const issuer = newHotkey()
  const worker = newHotkey()
  s.standings.set(issuer.address, { hotkey: issuer.address, uid: 1, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false })
  const attachment = signAttachment(issuer, { worker: worker.address, issuedAt: s.clock.now() })
  t.ok((await s.auth.present(attachment, worker.address)).ok)
  t.match(await s.auth.standing(worker.address), { source: 'attachment', role: 'worker' })
  const after = s.lookups()
  for (let i = 0; i < 20; i++) {
    t.ok((await s.auth.present(structuredClone(attachment), worker.address)).ok)
    t.match(await s.auth.standing(worker.address), { source: 'attachment' })
  }
  t.equal(s.lookups(), after, '20 presentations of the held attachment, 20 standings read: no lookup')
  // A new attachment (renewed) does replace it, and its standing is read afresh.
  s.clock.advance(1000)
  t.ok((await s.auth.present(signAttachment(issuer, { worker: worker.address, issuedAt: s.clock.now() }), worker.address)).ok)
  t.match(await s.auth.standing(worker.address), { source: 'attachment' })
  t.ok(s.lookups() > after, 'a renewed attachment starts a fresh lookup')
  // A revoked one is refused even when it is the one held.
  s.auth.useAttachmentPolicy({ isRevoked: () => true } as never)
  t.match(await s.auth.present(attachment, worker.address), { ok: false, reason: 'revoked' })
})

t.test('an issuer\'s registration is looked up once for concurrent presentations, and kept', async t => {
  await cryptoReady()
  const s = setup()
  const issuer = newHotkey()
  s.standings.set(issuer.address, { hotkey: issuer.address, uid: 1, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false })
  const before = s.lookups()
  const workers = Array.from({ length: 20 }, () => newHotkey())
  const checks = await Promise.all(workers.map(async w => await s.auth.present(signAttachment(issuer, { worker: w.address, issuedAt: s.clock.now() }), w.address)))
  t.ok(checks.every(c => c.ok), '20 attachments from one issuer, presented at once')
  t.equal(s.lookups() - before, 1, 'its registration asked once')
  const more = newHotkey()
  t.ok((await s.auth.present(signAttachment(issuer, { worker: more.address, issuedAt: s.clock.now() }), more.address)).ok)
  t.equal(s.lookups() - before, 1, 'and kept for the next one')
  // Deregistered and forgotten: the next presentation reads the chain again and is refused.
  s.standings.delete(issuer.address)
  s.auth.forget(issuer.address)
  const late = newHotkey()
  t.match(await s.auth.present(signAttachment(issuer, { worker: late.address, issuedAt: s.clock.now() }), late.address), { ok: false, reason: 'issuer_unregistered' })
})
