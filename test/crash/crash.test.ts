import assert from 'node:assert/strict'
import { it } from 'node:test'
import { tempDir } from '../helpers/cleanup.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { seeded } from '../helpers/seed.ts'
import { crashTarget, runCrash, unavailableReason } from './crash.ts'

// A few rounds of test/crash/crash.ts inside `npm test` (`npm run test:crash` runs 50):
// write load against a real server, SIGKILL at a seeded random moment, restart on the same storage,
// every acknowledged write present, storage intact. On the engine of the pass: SQLite in the
// SQLite pass, PostgreSQL in the PostgreSQL pass.

const ROUNDS = 3

it(`crash safety on ${TEST_ENGINE}: ${ROUNDS} rounds of load, SIGKILL, restart, verify`, async (t) => {
  const target = await crashTarget(t, TEST_ENGINE, tempDir(t, 'statusd-crash-ci-'))
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
