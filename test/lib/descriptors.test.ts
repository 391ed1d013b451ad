import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StreamQuota } from '../../src/lib/client-limits.ts'
import {
  ASSUMED_DESCRIPTOR_LIMIT,
  countOpenDescriptors,
  parseDescriptorLimit,
  readDescriptorLimit,
  streamBudget,
} from '../../src/lib/descriptors.ts'

// Server-wide stream capacity (docs/operations.md#server-wide-stream-capacity): the budget
// the server cuts from its descriptor limit, and the quota that holds it.

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             96365                96365                processes
Max open files            1024                 4096                 files
Max locked memory         8388608              8388608              bytes
`

describe('server-wide stream capacity: the budget', () => {
  it('the soft "Max open files" of /proc/<pid>/limits; null when it does not say', () => {
    assert.equal(parseDescriptorLimit(LIMITS), 1024)
    assert.equal(parseDescriptorLimit(LIMITS.replace('1024 ', 'unlimited ')), null)
    assert.equal(parseDescriptorLimit(''), null)
  })

  it('on Linux this process reads its limit and counts what it holds', () => {
    if (process.platform !== 'linux') return
    const limit = readDescriptorLimit()
    const held = countOpenDescriptors()
    assert.ok(limit !== null && limit > 0)
    // stdin, stdout and stderr at least
    assert.ok(held !== null && held >= 3 && held < limit)
  })

  it('streams keep a fifth of the limit free, connections a twentieth; both less what is held and what storage may open', () => {
    const cases: [string, Parameters<typeof streamBudget>[0], number, number | null][] = [
      ['SQLite', { limit: 1024, held: 26, storageConnections: 0, streamsMax: null }, 793, 946],
      [
        'a pool of 10',
        { limit: 1024, held: 30, storageConnections: 10, streamsMax: null },
        779,
        932,
      ],
      [
        'a large limit',
        { limit: 524288, held: 40, storageConnections: 0, streamsMax: null },
        419390,
        498033,
      ],
      ['STREAMS_MAX', { limit: 1024, held: 26, storageConnections: 0, streamsMax: 50 }, 50, 946],
      [
        'a limit that leaves nothing',
        { limit: 16, held: 20, storageConnections: 0, streamsMax: null },
        0,
        0,
      ],
      [
        'the limit unknown',
        { limit: null, held: null, storageConnections: 0, streamsMax: null },
        819,
        null,
      ],
    ]
    for (const [what, input, streams, maxConnections] of cases) {
      const budget = streamBudget(input)
      assert.equal(budget.streams, streams, what)
      assert.equal(budget.maxConnections, maxConnections, what)
      assert.equal(budget.limitRead, input.limit !== null, what)
      assert.equal(budget.descriptorLimit, input.limit ?? ASSUMED_DESCRIPTOR_LIMIT, what)
    }
  })
})

describe('server-wide stream capacity: the quota', () => {
  it('beyond the capacity a place is refused as the server\'s ("server"), before it a client\'s cap ("client"); a release lets one more in', () => {
    const quota = new StreamQuota(2)
    quota.capacity = 3
    const a1 = quota.acquire('a')
    const a2 = quota.acquire('a')
    assert.equal(typeof a1, 'function')
    assert.equal(typeof a2, 'function')
    assert.equal(quota.acquire('a'), 'client')
    const b1 = quota.acquire('b')
    assert.equal(typeof b1, 'function')
    assert.equal(quota.total, 3)
    assert.equal(quota.acquire('c'), 'server')
    if (typeof a1 !== 'function') return
    a1()
    a1()
    assert.equal(quota.total, 2, 'a place is given back once')
    assert.equal(typeof quota.acquire('c'), 'function')
    assert.equal(quota.acquire('d'), 'server')
  })
})
