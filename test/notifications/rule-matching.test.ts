import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  parseChannelIds,
  parseCondition,
  ruleMatches,
} from '../../src/modules/notifications/rule-matching.ts'

// docs/notifications.md#rules: which events a rule's condition hears, as one table. The
// condition is given as it is stored (JSON text), so that one this version does not know is
// a row too: it hears nothing.

type Row = [
  rule: string,
  condition: string,
  event: string,
  previous: string | null,
  value: string | null,
  fires: boolean,
]

const TABLE: Row[] = [
  ['any: a change', '"any"', 'status.changed', 'OK', 'DOWN', true],
  ['any: the same value written again', '"any"', 'status.changed', 'OK', 'OK', true],
  ['any: the first value', '"any"', 'status.changed', null, 'OK', true],
  ['any: not staleness', '"any"', 'status.stale', 'OK', 'OK', false],
  ['any: not a channel test', '"any"', 'channel.test', null, null, false],
  ['stale: staleness', '"stale"', 'status.stale', 'OK', 'OK', true],
  ['stale: not a change', '"stale"', 'status.changed', 'OK', 'DOWN', false],
  [
    'changesTo: to a listed value',
    '{"changesTo":["DOWN","ERROR"]}',
    'status.changed',
    'OK',
    'DOWN',
    true,
  ],
  [
    'changesTo: between listed values',
    '{"changesTo":["DOWN","ERROR"]}',
    'status.changed',
    'DOWN',
    'ERROR',
    true,
  ],
  [
    'changesTo: the first value, listed',
    '{"changesTo":["DOWN"]}',
    'status.changed',
    null,
    'DOWN',
    true,
  ],
  [
    'changesTo: the listed value written again (an update)',
    '{"changesTo":["DOWN"]}',
    'status.changed',
    'DOWN',
    'DOWN',
    true,
  ],
  ['changesTo: to another value', '{"changesTo":["DOWN"]}', 'status.changed', 'DOWN', 'OK', false],
  [
    'changesTo: values compare exactly (case)',
    '{"changesTo":["DOWN"]}',
    'status.changed',
    'OK',
    'down',
    false,
  ],
  ['changesTo: not staleness', '{"changesTo":["DOWN"]}', 'status.stale', 'OK', 'DOWN', false],
  [
    'changesTo: to no value (null listed)',
    '{"changesTo":[null]}',
    'status.changed',
    'OK',
    null,
    true,
  ],
  ['leaves: from a listed value', '{"leaves":["OK"]}', 'status.changed', 'OK', 'DOWN', true],
  [
    'leaves: the listed value written again (it stays)',
    '{"leaves":["OK"]}',
    'status.changed',
    'OK',
    'OK',
    false,
  ],
  ['leaves: from an unlisted value', '{"leaves":["OK"]}', 'status.changed', 'DOWN', 'ERROR', false],
  [
    'leaves: to another listed value (still among them)',
    '{"leaves":["OK","FINE"]}',
    'status.changed',
    'OK',
    'FINE',
    false,
  ],
  [
    'leaves: from a listed value to an unlisted one',
    '{"leaves":["OK","FINE"]}',
    'status.changed',
    'FINE',
    'DOWN',
    true,
  ],
  [
    'leaves: the first value (nothing left)',
    '{"leaves":["OK"]}',
    'status.changed',
    null,
    'DOWN',
    false,
  ],
  ['leaves: not staleness', '{"leaves":["OK"]}', 'status.stale', 'OK', 'DOWN', false],
  ['an unknown condition hears nothing', '"sometimes"', 'status.changed', 'OK', 'DOWN', false],
  [
    'a condition whose list is no list hears nothing',
    '{"changesTo":"DOWN"}',
    'status.changed',
    'OK',
    'DOWN',
    false,
  ],
  ['an unreadable condition hears nothing', 'not json', 'status.changed', 'OK', 'DOWN', false],
  [
    'changesTo and leaves: to a changesTo value',
    '{"changesTo":["BUSY"],"leaves":["FREE"]}',
    'status.changed',
    'AWAY',
    'BUSY',
    true,
  ],
  [
    'changesTo and leaves: leaving a leaves value',
    '{"changesTo":["BUSY"],"leaves":["FREE"]}',
    'status.changed',
    'FREE',
    'AWAY',
    true,
  ],
  [
    'changesTo and leaves: both at once (told once)',
    '{"changesTo":["BUSY"],"leaves":["FREE"]}',
    'status.changed',
    'FREE',
    'BUSY',
    true,
  ],
  [
    'changesTo and leaves: neither',
    '{"changesTo":["BUSY"],"leaves":["FREE"]}',
    'status.changed',
    'AWAY',
    'OUT',
    false,
  ],
  [
    'changesTo and leaves: a leaves value written again',
    '{"changesTo":["BUSY"],"leaves":["FREE"]}',
    'status.changed',
    'FREE',
    'FREE',
    false,
  ],
  [
    'changesTo and leaves: not staleness',
    '{"changesTo":["BUSY"],"leaves":["FREE"]}',
    'status.stale',
    'FREE',
    'BUSY',
    false,
  ],
  [
    'a condition with an unknown property hears nothing',
    '{"changesTo":["BUSY"],"sometimes":true}',
    'status.changed',
    'FREE',
    'BUSY',
    false,
  ],
  ['an empty condition object hears nothing', '{}', 'status.changed', 'FREE', 'BUSY', false],
  [
    'a condition whose leaves is no list hears nothing',
    '{"changesTo":["BUSY"],"leaves":"FREE"}',
    'status.changed',
    'FREE',
    'BUSY',
    false,
  ],
]

// byOthers: whether the change's author (`by`: whoever it was made for, a timed change's
// setter included) is the rule's own user. `by` null: an author this version does not know.
type WhoRow = [
  rule: string,
  condition: string,
  event: string,
  byOthers: boolean,
  by: string | null,
  fires: boolean,
]

const RULE_USER = 'u-ann'
const WHO_TABLE: WhoRow[] = [
  ['byOthers: a change by another user', '"any"', 'status.changed', true, 'u-bob', true],
  ["byOthers: a change by the rule's own user", '"any"', 'status.changed', true, RULE_USER, false],
  [
    "byOthers: a timed change the rule's user set (made for them)",
    '{"changesTo":["FREE"]}',
    'status.changed',
    true,
    RULE_USER,
    false,
  ],
  [
    'byOthers: a change by another user, condition matched',
    '{"changesTo":["FREE"]}',
    'status.changed',
    true,
    'u-bob',
    true,
  ],
  [
    'byOthers: a change by another user, condition not matched',
    '{"changesTo":["BUSY"]}',
    'status.changed',
    true,
    'u-bob',
    false,
  ],
  ['byOthers: an author not recorded is not the user', '"any"', 'status.changed', true, null, true],
  ['byOthers: staleness is made by no one', '"stale"', 'status.stale', true, null, true],
  ["without byOthers: the user's own change", '"any"', 'status.changed', false, RULE_USER, true],
]

describe('rule matching (docs/notifications.md#rules)', () => {
  for (const [rule, condition, event, previous, value, fires] of TABLE)
    it(`${rule}: ${condition} on ${event} ${previous} → ${value} ${fires ? 'fires' : 'does not fire'}`, () =>
      assert.equal(
        ruleMatches(parseCondition(condition), event, { previousValue: previous, value }),
        fires,
      ))

  for (const [rule, condition, event, byOthers, by, fires] of WHO_TABLE)
    it(`${rule}: ${condition} byOthers=${byOthers} by ${by ?? 'nobody'} ${fires ? 'fires' : 'does not fire'}`, () =>
      assert.equal(
        ruleMatches(
          parseCondition(condition),
          event,
          { previousValue: 'BUSY', value: 'FREE' },
          { rule: { userId: RULE_USER, byOthers }, by },
        ),
        fires,
      ))

  it("a rule's channels: null is every channel, a list only those", () => {
    assert.equal(parseChannelIds(null), null)
    assert.deepEqual(parseChannelIds('["a","b"]'), new Set(['a', 'b']))
    assert.deepEqual(parseChannelIds('[]'), new Set())
    assert.deepEqual(parseChannelIds('not json'), new Set(), 'unreadable: none, never all')
  })
})
