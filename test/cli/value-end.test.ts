import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { UsageError } from '../../src/cli/output.ts'
import { durationOf, localTime, untilOf } from '../../src/cli/value-end.ts'

// How `statusd set --for` and `--until` read what a person types (docs/cli.md#values-that-end):
// into the API's `valueUntil`, an ISO 8601 duration or an instant. Local time is a time zone
// with daylight saving, set for this file.

const zone = process.env.TZ
before(() => {
  process.env.TZ = 'Europe/Berlin'
})
after(() => {
  if (zone === undefined) delete process.env.TZ
  else process.env.TZ = zone
})

describe('--for takes a duration: d, h and m parts, or ISO 8601', () => {
  const cases: [string, string][] = [
    ['45m', 'PT45M'],
    ['1h', 'PT1H'],
    ['1h30m', 'PT1H30M'],
    ['2d', 'P2D'],
    ['1d12h', 'P1DT12H'],
    ['90M', 'PT90M'],
    ['PT45M', 'PT45M'],
    ['pt2h', 'PT2H'],
    ['P1DT2H', 'P1DT2H'],
  ]
  for (const [given, sent] of cases)
    it(`${given} is sent as ${sent}`, () => assert.equal(durationOf(given), sent))

  for (const given of ['', '45', 'm', '45 min', '1m1h', '-5m', 'P', 'PT', 'soon'])
    it(`"${given}" is a usage error`, () => assert.throws(() => durationOf(given), UsageError))
})

describe('--until takes a local time (the next one: today or tomorrow) or an instant', () => {
  const cases: [string, string, string, string][] = [
    [
      'a time later today is today',
      '2026-11-30T09:10:00+01:00',
      '14:00',
      '2026-11-30T13:00:00.000Z',
    ],
    [
      'a time passed today is tomorrow',
      '2026-11-30T15:00:00+01:00',
      '14:00',
      '2026-12-01T13:00:00.000Z',
    ],
    [
      'the time it is now is tomorrow',
      '2026-11-30T14:00:00+01:00',
      '14:00',
      '2026-12-01T13:00:00.000Z',
    ],
    ['one hour digit', '2026-11-30T06:00:00+01:00', '7:05', '2026-11-30T06:05:00.000Z'],
    [
      'across the change to summer time, local',
      '2026-03-28T20:00:00+01:00',
      '09:00',
      '2026-03-29T07:00:00.000Z',
    ],
    [
      'a local time skipped by that change is the next valid one',
      '2026-03-28T20:00:00+01:00',
      '02:30',
      '2026-03-29T01:30:00.000Z',
    ],
    [
      'an instant with its offset as it is',
      '2026-11-30T09:00:00Z',
      '2026-12-24T18:00:00+01:00',
      '2026-12-24T17:00:00.000Z',
    ],
    ['an instant in UTC', '2026-11-30T09:00:00Z', '2026-12-24T17:00Z', '2026-12-24T17:00:00.000Z'],
  ]
  for (const [rule, now, given, sent] of cases)
    it(`${rule}: ${given} at ${now} is ${sent}`, () =>
      assert.equal(untilOf(given, new Date(now)), sent))

  for (const given of ['', '24:00', '14', '14:60', '2pm', '2026-12-24', '2026-12-24T18:00'])
    it(`"${given}" is a usage error (an instant needs its offset)`, () =>
      assert.throws(() => untilOf(given, new Date()), UsageError))
})

describe('the end is printed in local time, with its date when not today', () => {
  const now = new Date('2026-11-30T09:00:00+01:00')
  it('today: 14:45', () => assert.equal(localTime('2026-11-30T13:45:00Z', now), '14:45'))
  it('another day: with the date', () =>
    assert.equal(localTime('2026-12-01T13:45:00Z', now), '2026-12-01 14:45'))
})
