import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Plan } from '../../src/modules/plans/plans.ts'
import type { ServiceDeps } from '../../src/modules/service-deps.ts'
import { setStatusByKey, updateStatusById } from '../../src/modules/statuses/statuses.service.ts'
import { ensureFirstUser } from '../../src/modules/users/first-user.ts'
import { countUsers } from '../../src/modules/users/users.repository.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { TEST_PLANS } from '../helpers/app.ts'
import { openDatabase } from '../helpers/database.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { onEngine, openStore } from '../helpers/store.ts'

// Services on one database under concurrent calls. On PostgreSQL every call runs on its own
// pooled connection at READ COMMITTED, as requests do; SQLite's one connection serialises.

const N = 24

describe(onEngine('concurrent service calls'), () => {
  it('concurrent creates of one key give exactly one status; every call is counted', async (t) => {
    const store = await openStore(t, { poolSize: 10 })
    const deps: ServiceDeps = { db: store.db, plans: TEST_PLANS }
    const user = await createUser(store.db, TEST_PLANS, {
      name: 'u',
      plan: 'unlimited',
      verified: true,
    })
    const caller = { userId: user.id, plan: user.plan }
    const results = await Promise.all(
      Array.from({ length: N }, () => setStatusByKey(deps, caller, 'one-key', { value: 'ON' })),
    )
    assert.equal(results.filter((r) => r.created).length, 1, 'exactly one created it')
    assert.equal(new Set(results.map((r) => r.status.id)).size, 1, 'all saw the same status')
    const rows = await store.db.selectFrom('statuses').select(['id', 'change_count']).execute()
    assert.equal(rows.length, 1)
    assert.equal(rows[0]?.change_count, N, 'the creation and every update are counted')
    const history = await store.db
      .selectFrom('status_history')
      .select('change_no')
      .orderBy('change_no')
      .execute()
    assert.deepEqual(
      history.map((h) => h.change_no),
      Array.from({ length: N }, (_, i) => i + 1),
      'one history row per value, numbered without gaps',
    )
  })

  it('concurrent value updates by id are all counted, each with its history row', async (t) => {
    const store = await openStore(t, { poolSize: 10 })
    const deps: ServiceDeps = { db: store.db, plans: TEST_PLANS }
    const user = await createUser(store.db, TEST_PLANS, {
      name: 'u',
      plan: 'unlimited',
      verified: true,
    })
    const caller = { userId: user.id, plan: user.plan }
    const { status } = await setStatusByKey(deps, caller, 'k-one', { value: 'V0' })
    const updated = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        updateStatusById(deps, caller, status.id, { value: `V${i + 1}` }),
      ),
    )
    assert.deepEqual(
      updated.map((s) => s.status.changeCount).sort((a, b) => a - b),
      Array.from({ length: N }, (_, i) => i + 2),
      'each update saw its own count',
    )
    const history = await store.db
      .selectFrom('status_history')
      .select(['change_no', 'value'])
      .where('status_id', '=', status.id)
      .orderBy('change_no')
      .execute()
    assert.equal(history.length, N + 1)
    const final = await store.db
      .selectFrom('statuses')
      .selectAll()
      .where('id', '=', status.id)
      .executeTakeFirstOrThrow()
    assert.equal(final.change_count, N + 1)
    assert.equal(history[history.length - 1]?.value, final.value, 'the last change is the value')
  })

  it("concurrent creates of different keys stop at the plan's status limit", async (t) => {
    const store = await openStore(t, { poolSize: 10 })
    const plans = { ...TEST_PLANS, tiny: { ...(TEST_PLANS.unlimited as Plan), maxStatuses: 5 } }
    const deps: ServiceDeps = { db: store.db, plans }
    const user = await createUser(store.db, plans, { name: 'u', plan: 'tiny', verified: true })
    const caller = { userId: user.id, plan: user.plan }
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        setStatusByKey(deps, caller, `key-${i}`, { value: 'ON' }),
      ),
    )
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5)
    for (const r of results)
      if (r.status === 'rejected')
        assert.equal((r.reason as { errorCode?: string }).errorCode, 'planLimitReached')
    const rows = await store.db.selectFrom('statuses').select('id').execute()
    assert.equal(rows.length, 5)
  })

  it('instances starting at once on an empty database create exactly one first user', {
    skip: TEST_ENGINE === 'sqlite' && 'several instances share one database only on PostgreSQL',
  }, async (t) => {
    const store = await openStore(t)
    // separate pools, as separate processes would have
    const instances = Array.from({ length: 4 }, () => openDatabase(t, store.url, { poolSize: 2 }))
    const created = await Promise.all(instances.map((d) => ensureFirstUser(d.db, TEST_PLANS)))
    assert.equal(created.filter((c) => c !== null).length, 1)
    assert.equal(await countUsers(store.db), 1)
  })
})
