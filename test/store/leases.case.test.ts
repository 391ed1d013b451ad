import assert from 'node:assert/strict'
import { beforeEach, describe, it } from 'node:test'
import { releaseLease, takeLease } from '../../src/modules/mqtt/leases.repository.ts'
import { onEngine, useStore } from '../helpers/store.ts'

// docs/integrations.md#one-bridge-across-instances: one holder at a time; the holder renews,
// another takes the lease once its time has passed or it was given up.

const at = (second: number) => new Date(Date.UTC(2026, 11, 2, 12, 0, second)).toISOString()

describe(onEngine('leases'), () => {
  const store = useStore()
  // a lease of its own per test: the store may be shared by the suite
  let name = ''
  beforeEach(() => {
    name = `lease-${Math.random()}`
  })
  const take = (holder: string, now: number, until: number) =>
    takeLease(store().db, { name, holder, now: at(now), until: at(until) })

  it('the first to ask holds it; another is refused while it lasts; the holder renews it', async () => {
    assert.equal(await take('a', 0, 8), true)
    assert.equal(await take('b', 1, 9), false)
    assert.equal(await take('a', 2, 10), true, 'renewed')
    assert.equal(await take('b', 9, 17), false, 'the renewal moved its end')
  })

  it('once its time has passed, another takes it, and the old holder can no longer renew it', async () => {
    assert.equal(await take('a', 0, 8), true)
    assert.equal(await take('b', 9, 17), true)
    assert.equal(await take('a', 10, 18), false)
  })

  it('given up, another takes it at once; only the holder gives it up', async () => {
    assert.equal(await take('a', 0, 8), true)
    await releaseLease(store().db, name, 'b')
    assert.equal(await take('b', 1, 9), false, 'not given up by someone else')
    await releaseLease(store().db, name, 'a')
    assert.equal(await take('b', 1, 9), true)
  })

  it('of many asking at once, exactly one holds it', async () => {
    const won = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((h) => take(h, 0, 8)))
    assert.equal(won.filter(Boolean).length, 1)
  })
})
