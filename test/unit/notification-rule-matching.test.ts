import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type RuleCondition, ruleMatches } from '../../src/modules/notifications/rule-matching.ts'

interface RuleEvent {
  type: string
  value: string | null
  previousValue: string | null
}

// docs/notifications.md#rules: what each rule asks to be told of.

const changed = (previousValue: string | null, value: string): RuleEvent => ({
  type: 'status.changed',
  previousValue,
  value,
})
const stale: RuleEvent = { type: 'status.stale', previousValue: null, value: 'ON' }

const TABLE: [string, RuleCondition, RuleEvent, boolean][] = [
  ['any: a change', 'any', changed('A', 'B'), true],
  ['any: the same value written again', 'any', changed('A', 'A'), true],
  ['any: the first value', 'any', changed(null, 'A'), true],
  ['any: not staleness', 'any', stale, false],
  ['stale: staleness', 'stale', stale, true],
  ['stale: not a change', 'stale', changed('A', 'B'), false],
  ['changesTo: to a listed value', { changesTo: ['B', 'C'] }, changed('A', 'B'), true],
  ['changesTo: between listed values', { changesTo: ['B', 'C'] }, changed('C', 'B'), true],
  ['changesTo: the first value, listed', { changesTo: ['A'] }, changed(null, 'A'), true],
  ['changesTo: to another value', { changesTo: ['B'] }, changed('A', 'C'), false],
  [
    'changesTo: the listed value written again (an update)',
    { changesTo: ['B'] },
    changed('B', 'B'),
    true,
  ],
  ['changesTo: not staleness', { changesTo: ['ON'] }, stale, false],
  [
    'changesTo: values compare exactly (case)',
    { changesTo: ['busy'] },
    changed('A', 'BUSY'),
    false,
  ],
  ['leaves: from a listed value', { leaves: ['A'] }, changed('A', 'B'), true],
  ['leaves: from an unlisted value', { leaves: ['A'] }, changed('C', 'B'), false],
  [
    'leaves: the listed value written again (it stays)',
    { leaves: ['A'] },
    changed('A', 'A'),
    false,
  ],
  [
    'leaves: to another listed value (still among them)',
    { leaves: ['A', 'B'] },
    changed('A', 'B'),
    false,
  ],
  [
    'leaves: from a listed value to an unlisted one',
    { leaves: ['A', 'B'] },
    changed('B', 'C'),
    true,
  ],
  ['leaves: the first value (nothing left)', { leaves: ['A'] }, changed(null, 'B'), false],
  ['leaves: not staleness', { leaves: ['ON'] }, stale, false],
]

describe('notification rules: which events each condition matches', () => {
  for (const [name, condition, event, expected] of TABLE)
    it(name, () => assert.equal(ruleMatches(condition, event.type, event), expected))
})
