import assert from 'node:assert/strict'
import { it } from 'node:test'
import { tempDir } from '../helpers/cleanup.ts'
import { seeded } from '../helpers/seed.ts'
import { crashEngines, crashTarget, runCrash, unavailableReason } from './crash.ts'

// A few rounds of test/crash/crash.ts inside `npm test` (`npm run test:crash` runs 50):
// write load against a real server, SIGKILL at a seeded random moment, restart on the same storage,
// every acknowledged write present, storage intact. PostgreSQL too when TEST_DATABASE_URL is set.

const ROUNDS = 3

if (!crashEngines().includes('postgres'))
  it('crash safety on PostgreSQL', (t) => t.skip('TEST_DATABASE_URL is not set'))

for (const engine of crashEngines()) {
  it(`crash safety on ${engine}: ${ROUNDS} rounds of load, SIGKILL, restart, verify`, async (t) => {
    const target = await crashTarget(t, engine, tempDir(t, 'statusd-crash-ci-'))
    const reason = await unavailableReason(target)
    if (reason) return t.skip(reason)
    const report = await runCrash({
      t,
      rounds: ROUNDS,
      target,
      random: seeded(t),
      log: (line) => t.diagnostic(line),
    })
    t.diagnostic(JSON.stringify(report))
    assert.equal(report.rounds, ROUNDS)
    assert.ok(report.acknowledged > 0, 'the load got writes acknowledged')
  })
}
