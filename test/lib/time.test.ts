import assert from 'node:assert/strict'
import { it } from 'node:test'
import { CREATION_LEAD_MS, creationIso, nowIso, parseIsoInstant } from '../../src/lib/time.ts'

const ms = (iso: string) => Date.parse(iso)

it('creation order is exact: creation times in one burst are strictly increasing', () => {
  let last = ms(creationIso())
  for (let i = 1; i < 200; i++) {
    const at = ms(creationIso())
    assert.ok(at > last, `stamp ${i}`)
    last = at
  }
})

it('timestamps never run ahead of the clock: writes use it, creations borrow at most CREATION_LEAD_MS', () => {
  // 20 000 writes in a few milliseconds: before, every write borrowed a millisecond, and
  // this left the stored times about 20 s ahead of the clock
  let last = 0
  for (let i = 0; i < 20_000; i++) {
    const at = ms(nowIso())
    assert.ok(at >= last, 'never earlier than the one before')
    last = at
  }
  assert.ok(last <= Date.now() + CREATION_LEAD_MS)
  for (let i = 0; i < 20_000; i++) {
    const at = ms(creationIso())
    assert.ok(at >= last, 'never earlier than the one before')
    last = at
  }
  assert.ok(last <= Date.now() + CREATION_LEAD_MS, `${last - Date.now()} ms ahead`)
  // and a change right after a creation is not stamped before it
  assert.ok(ms(nowIso()) >= last)
})

it('a write takes the real clock, not a borrowed millisecond', () => {
  const before = Date.now()
  const at = ms(nowIso())
  // only a creation burst (the test above) may leave it up to CREATION_LEAD_MS ahead
  assert.ok(at >= before && at <= Date.now() + CREATION_LEAD_MS)
})

it('an expiry may be a leap second (RFC 3339 allows :60): it is the second after :59', () => {
  assert.equal(parseIsoInstant('2099-06-30T23:59:60Z')?.toISOString(), '2099-07-01T00:00:00.000Z')
  assert.equal(
    parseIsoInstant('2099-06-30T23:59:60.5+00:00')?.toISOString(),
    '2099-07-01T00:00:00.500Z',
  )
  assert.equal(parseIsoInstant('2099-06-30T23:59:61Z'), null)
  assert.equal(parseIsoInstant('2099-06-30T23:60:00Z'), null)
})
