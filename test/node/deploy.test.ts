// deploy/: a systemd unit per role and a pm2 app per role, whose settings are all real settings (a
// renamed or misspelled variable would be silently ignored by the node).
import t from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { REPO } from '../helpers/proc.ts'
import { NODE_SETTINGS } from '../../node/config.ts'

const known = new Set([...Object.values(NODE_SETTINGS).map(m => m.env), 'LOG_FORMAT'])

t.test('a systemd unit for each role and the bootstrap node; their env files use known settings only', async t => {
  const units = await readdir(join(REPO, 'deploy', 'systemd'))
  t.same(units.sort(), ['bwnet-bootstrap.service', 'bwnet-orchestrator.service', 'bwnet-validator.service', 'bwnet-worker.service'])
  for (const role of ['orchestrator', 'worker', 'validator']) {
    const unit = await readFile(join(REPO, 'deploy', 'systemd', `bwnet-${role}.service`), 'utf8')
    t.match(unit, `Environment=BWN_ROLE=${role}`)
    t.match(unit, 'ExecStart=/usr/bin/env bwnet node')
    t.match(unit, /KillSignal=SIGTERM/)
    const env = await readFile(join(REPO, 'deploy', 'env', `${role}.env`), 'utf8')
    for (const line of env.split('\n').filter(l => /^[A-Z_]+=/.test(l))) {
      const name = line.split('=')[0]!
      t.ok(known.has(name), `${role}.env: ${name} is a setting`)
    }
  }
})

t.test('the pm2 ecosystem runs each role with known settings', async t => {
  const eco = createRequire(import.meta.url)(join(REPO, 'deploy', 'ecosystem.config.cjs')) as { apps: Array<{ name: string, args: string, env: Record<string, string>, kill_timeout: number }> }
  t.same(eco.apps.map(a => a.name).sort(), ['bwnet-bootstrap', 'bwnet-orchestrator', 'bwnet-validator', 'bwnet-worker'])
  for (const app of eco.apps) {
    t.ok(app.kill_timeout > 5_000, `${app.name}: time for a clean stop`)
    for (const name of Object.keys(app.env)) t.ok(known.has(name), `${app.name}: ${name} is a setting`)
    if (app.name !== 'bwnet-bootstrap') t.equal(app.env.BWN_ROLE, app.name.replace('bwnet-', ''))
  }
})
