import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  canonicalTimeZone,
  cronProblem,
  latestFire,
  nextFires,
} from '../../src/modules/schedules/fires.ts'

// When a schedule's entries fire (docs/api.md#schedules): croner reads each 5-field entry in
// the schedule's IANA time zone. Europe/Berlin skips 02:00–03:00 on the last Sunday of March
// (2026-03-29) and repeats 02:00–03:00 on the last Sunday of October (2026-10-25).

const at = (iso: string) => new Date(iso)
const fires = (cron: string | string[], after: string, count = 3, timezone = 'Europe/Berlin') =>
  nextFires(
    (Array.isArray(cron) ? cron : [cron]).map((c, i) => ({ cron: c, value: `V${i}` })),
    timezone,
    at(after),
    count,
  ).map((f) => `${f.at.toISOString()} ${f.entry.value}`)

describe('schedule fires (docs/api.md#schedules)', () => {
  it('an entry fires at its local time in the time zone, summer and winter', () => {
    assert.deepEqual(fires('0 18 * * 1-5', '2026-07-03T00:00:00Z'), [
      '2026-07-03T16:00:00.000Z V0', // Friday 18:00 CEST
      '2026-07-06T16:00:00.000Z V0', // Monday
      '2026-07-07T16:00:00.000Z V0',
    ])
    assert.deepEqual(fires('0 18 * * 1-5', '2026-01-09T00:00:00Z', 1), [
      '2026-01-09T17:00:00.000Z V0', // 18:00 CET
    ])
  })

  it('a local time skipped by the spring change fires at the next valid minute (Berlin, last Sunday of March)', () => {
    assert.deepEqual(fires('30 2 * * *', '2026-03-28T12:00:00Z'), [
      '2026-03-29T01:00:00.000Z V0', // 02:30 does not exist: 03:00 CEST, the first minute after the gap
      '2026-03-30T00:30:00.000Z V0', // 02:30 CEST the day after
      '2026-03-31T00:30:00.000Z V0',
    ])
  })

  it('a list naming a skipped hour fires once after the gap, then at its other times', () => {
    assert.deepEqual(fires('15 2,4 * * *', '2026-03-28T12:00:00Z'), [
      '2026-03-29T01:00:00.000Z V0', // 02:15 skipped → 03:00 CEST
      '2026-03-29T02:15:00.000Z V0', // 04:15 CEST
      '2026-03-30T00:15:00.000Z V0',
    ])
  })

  it('a local time repeated by the autumn change fires once, at its first occurrence (Berlin, last Sunday of October)', () => {
    assert.deepEqual(fires('30 2 * * *', '2026-10-24T12:00:00Z'), [
      '2026-10-25T00:30:00.000Z V0', // 02:30 CEST; not again at 02:30 CET (01:30Z)
      '2026-10-26T01:30:00.000Z V0', // 02:30 CET the day after
      '2026-10-27T01:30:00.000Z V0',
    ])
  })

  it('asked from between the two occurrences of a repeated time, the repeated one does not fire again', () => {
    // 01:00Z is 02:00 CET, the second 02:00 of the night: 02:30 CET is not a fire
    assert.deepEqual(fires('30 2 * * *', '2026-10-25T01:00:00Z', 1), [
      '2026-10-26T01:30:00.000Z V0',
    ])
  })

  it('every entry follows the same rules, with * or a step in its minute or hour too: the skipped times fire once after the gap', () => {
    assert.deepEqual(fires('*/30 2 * * *', '2026-03-28T12:00:00Z', 3), [
      '2026-03-29T01:00:00.000Z V0', // 02:00 and 02:30 do not exist: one fire at 03:00 CEST
      '2026-03-30T00:00:00.000Z V0', // 02:00 CEST the day after
      '2026-03-30T00:30:00.000Z V0',
    ])
  })

  it('… and the repeated times fire once each, the first time', () => {
    assert.deepEqual(fires('*/30 * * * *', '2026-10-24T23:45:00Z', 6), [
      '2026-10-25T00:00:00.000Z V0', // 02:00 CEST
      '2026-10-25T00:30:00.000Z V0', // 02:30 CEST; not again at 02:00 or 02:30 CET
      '2026-10-25T02:00:00.000Z V0', // 03:00 CET
      '2026-10-25T02:30:00.000Z V0',
      '2026-10-25T03:00:00.000Z V0',
      '2026-10-25T03:30:00.000Z V0',
    ])
  })

  it('a zone that skips half an hour: Lord Howe Island, first Sunday of October', () => {
    // 02:00 +10:30 becomes 02:30 +11:00: 02:15 is skipped, and fires at 02:30 (15:30Z)
    assert.deepEqual(fires('15 2 * * *', '2026-10-03T00:00:00Z', 2, 'Australia/Lord_Howe'), [
      '2026-10-03T15:30:00.000Z V0',
      '2026-10-04T15:15:00.000Z V0',
    ])
  })

  it('entries together fire earliest first; two at the same instant make one fire, the later entry', () => {
    assert.deepEqual(fires(['0 9 * * *', '0 18 * * *', '0 9 * * 1'], '2026-07-05T12:00:00Z', 4), [
      '2026-07-05T16:00:00.000Z V1', // Sunday 18:00
      '2026-07-06T07:00:00.000Z V2', // Monday 09:00: both first and third entries, the third wins
      '2026-07-06T16:00:00.000Z V1',
      '2026-07-07T07:00:00.000Z V0',
    ])
  })

  it('the latest fire missed in a window is one, the latest', () => {
    const entries = [
      { cron: '0 9 * * *', value: 'OPEN' },
      { cron: '0 18 * * *', value: 'CLOSED' },
    ]
    const missed = latestFire(
      entries,
      'UTC',
      at('2026-07-05T00:00:00Z'),
      at('2026-07-05T20:00:00Z'),
    )
    assert.equal(missed?.at.toISOString(), '2026-07-05T18:00:00.000Z')
    assert.equal(missed?.entry.value, 'CLOSED')
    assert.equal(
      latestFire(entries, 'UTC', at('2026-07-05T09:00:00Z'), at('2026-07-05T17:59:00Z')),
      null,
      'a fire at the window start itself was applied before: none in (09:00, 17:59]',
    )
    assert.equal(
      latestFire(entries, 'UTC', at('2026-07-05T00:00:00Z'), at('2026-07-05T09:00:00Z'))?.entry
        .value,
      'OPEN',
      'a fire at the end of the window counts',
    )
  })
})

describe('schedule input rules (docs/api.md#schedules)', () => {
  for (const [cron, problem] of [
    ['0 18 * * 1-5', null],
    ['*/15 8-17 * * MON-FRI', null],
    ['0 9 * * *  ', null],
    ['0 9 * *', /must have 5 fields/],
    ['0 0 9 * * *', /must have 5 fields/],
    ['@daily', /must have 5 fields/],
    ['61 * * * *', /not a valid cron expression .*minute/],
    ['a b c d e', /not a valid cron expression/],
    ['0 0 30 2 *', /never fires/],
  ] as const)
    it(`cron ${JSON.stringify(cron)} is ${problem === null ? 'taken' : 'refused'}`, () => {
      const found = cronProblem(cron)
      if (problem === null) assert.equal(found, null)
      else assert.match(found ?? '', problem)
    })

  for (const [name, canonical] of [
    ['Europe/Berlin', 'Europe/Berlin'],
    ['europe/berlin', 'Europe/Berlin'],
    ['UTC', 'UTC'],
    ['Mars/Olympus_Mons', null],
    ['+02:00', null],
    ['', null],
  ] as const)
    it(`time zone ${JSON.stringify(name)} is ${canonical ? `taken as ${canonical}` : 'refused'}`, () => {
      assert.equal(canonicalTimeZone(name), canonical)
    })
})
