import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, it } from 'node:test'
import { killAll } from '../helpers/processes.ts'
import { crashTargets, runCrash, unavailableReason } from './crash.ts'

// A few rounds of test/crash/crash.ts inside `npm test` (`npm run test:crash` runs 50):
// write load against a real server, SIGKILL at a random moment, restart on the same storage,
// every acknowledged write present, storage intact. PostgreSQL too when TEST_DATABASE_URL is set.

const ROUNDS = 3
let dir: string
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-crash-ci-'))
})
after(() => {
  killAll()
  fs.rmSync(dir, { recursive: true, force: true })
})

const targets = crashTargets(path.join(os.tmpdir(), 'unused.db')).map((t) => t.engine)
if (!targets.includes('postgres'))
  it('crash safety on PostgreSQL', (t) => t.skip('TEST_DATABASE_URL is not set'))

for (const engine of targets) {
  it(`crash safety on ${engine}: ${ROUNDS} rounds of load, SIGKILL, restart, verify`, async (t) => {
    const target = crashTargets(path.join(dir, engine, 'statusd.db')).find(
      (x) => x.engine === engine,
    )
    assert.ok(target)
    const reason = await unavailableReason(target)
    if (reason) return t.skip(reason)
    const report = await runCrash({ rounds: ROUNDS, target, log: (line) => t.diagnostic(line) })
    t.diagnostic(JSON.stringify(report))
    assert.equal(report.rounds, ROUNDS)
    assert.ok(report.acknowledged > 0, 'the load got writes acknowledged')
  })
}
