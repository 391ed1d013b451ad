import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  parseChannelIds,
  parseCondition,
  ruleMatches,
} from '../../src/modules/notifications/rule-matching.ts'

// docs/notifications.md#rules: which rule an event fires, as a table.

type Row = [
  condition: string,
  event: string,
  previous: string | null,
  value: string | null,
  fires: boolean,
]

const TABLE: Row[] = [
  ['"any"', 'status.changed', 'OK', 'DOWN', true],
  ['"any"', 'status.changed', 'OK', 'OK', true],
  ['"any"', 'status.changed', null, 'OK', true],
  ['"any"', 'status.stale', 'OK', 'OK', false],
  ['"stale"', 'status.stale', 'OK', 'OK', true],
  ['"stale"', 'status.changed', 'OK', 'DOWN', false],
  ['{"changesTo":["DOWN","ERROR"]}', 'status.changed', 'OK', 'DOWN', true],
  ['{"changesTo":["DOWN","ERROR"]}', 'status.changed', 'DOWN', 'ERROR', true],
  ['{"changesTo":["DOWN"]}', 'status.changed', 'DOWN', 'DOWN', true],
  ['{"changesTo":["DOWN"]}', 'status.changed', 'DOWN', 'OK', false],
  ['{"changesTo":["DOWN"]}', 'status.changed', 'OK', 'down', false],
  ['{"changesTo":["DOWN"]}', 'status.stale', 'OK', 'DOWN', false],
  ['{"changesTo":[null]}', 'status.changed', 'OK', null, true],
  ['{"leaves":["OK"]}', 'status.changed', 'OK', 'DOWN', true],
  ['{"leaves":["OK"]}', 'status.changed', 'OK', 'OK', false],
  ['{"leaves":["OK"]}', 'status.changed', 'DOWN', 'ERROR', false],
  ['{"leaves":["OK","FINE"]}', 'status.changed', 'OK', 'FINE', false],
  ['{"leaves":["OK","FINE"]}', 'status.changed', 'FINE', 'DOWN', true],
  ['{"leaves":["OK"]}', 'status.changed', null, 'DOWN', false],
  ['{"leaves":["OK"]}', 'status.stale', 'OK', 'DOWN', false],
  ['"sometimes"', 'status.changed', 'OK', 'DOWN', false],
  ['{"changesTo":"DOWN"}', 'status.changed', 'OK', 'DOWN', false],
  ['not json', 'status.changed', 'OK', 'DOWN', false],
  ['"any"', 'channel.test', null, null, false],
]

describe('rule matching (docs/notifications.md#rules)', () => {
  for (const [condition, event, previous, value, fires] of TABLE)
    it(`${condition} on ${event} ${previous} → ${value}: ${fires ? 'fires' : 'does not fire'}`, () =>
      assert.equal(
        ruleMatches(parseCondition(condition), event, { previousValue: previous, value }),
        fires,
      ))

  it("a rule's channels: null is every channel, a list only those", () => {
    assert.equal(parseChannelIds(null), null)
    assert.deepEqual(parseChannelIds('["a","b"]'), new Set(['a', 'b']))
    assert.deepEqual(parseChannelIds('[]'), new Set())
    assert.deepEqual(parseChannelIds('not json'), new Set(), 'unreadable: none, never all')
  })
})
