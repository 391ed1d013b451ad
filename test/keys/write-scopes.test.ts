import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ApiError } from '../../src/lib/errors.ts'
import { type Scope, satisfies } from '../../src/modules/keys/scopes.ts'
import {
  assertWriteScopes,
  requiredWriteScopes,
  type StatusWrite,
} from '../../src/modules/statuses/write-scopes.ts'

// The write-scope rule (docs/accounts.md#scoped-keys), as one pure function: which scopes an
// API key needs for a write, field by field.

const update = (...fields: string[]): StatusWrite => ({ kind: 'update', fields })
const create = (...fields: string[]): StatusWrite => ({ kind: 'create', fields })

const TABLE: [string, StatusWrite, Scope[]][] = [
  ['the value alone needs status:value', update('value'), ['status:value']],
  ['the name needs status:write', update('name'), ['status:write']],
  ['the description needs status:write', update('description'), ['status:write']],
  ['the colour needs status:write', update('colorNo'), ['status:write']],
  ['the type needs status:write', update('type'), ['status:write']],
  ['value and name need both', update('value', 'name'), ['status:value', 'status:write']],
  ['accessType needs status:manage', update('accessType'), ['status:manage']],
  ['accessTypeUserList needs status:manage', update('accessTypeUserList'), ['status:manage']],
  ['accessTypeHistory needs status:manage', update('accessTypeHistory'), ['status:manage']],
  ['listed needs status:manage', update('listed'), ['status:manage']],
  [
    'value, name and accessType need all three',
    update('accessType', 'name', 'value'),
    ['status:value', 'status:write', 'status:manage'],
  ],
  ['creating needs status:write', create(), ['status:write']],
  [
    'creating with a value needs status:write (which includes status:value)',
    create('value'),
    ['status:value', 'status:write'],
  ],
  [
    'creating with access settings needs status:manage too',
    create('value', 'accessType'),
    ['status:value', 'status:write', 'status:manage'],
  ],
  ['deleting needs status:manage', { kind: 'delete' }, ['status:manage']],
]

describe('the write-scope rule', () => {
  for (const [name, write, scopes] of TABLE)
    it(name, () => assert.deepEqual(requiredWriteScopes(write), scopes))
})

/** Whether a key holding `held` may make the write: assertWriteScopes's answer. */
function allowed(held: Scope[], write: StatusWrite): boolean | string {
  try {
    assertWriteScopes({ scopes: held, statusIds: null }, write)
    return true
  } catch (err) {
    assert.ok(err instanceof ApiError)
    assert.equal(err.statusCode, 403)
    assert.equal(err.errorCode, 'insufficientScope')
    return err.message
  }
}

describe('the write-scope rule, applied to what a key holds', () => {
  it('status:write includes status:value, and nothing else includes another scope', () => {
    assert.ok(satisfies(['status:write'], 'status:value'))
    assert.ok(!satisfies(['status:value'], 'status:write'))
    assert.ok(!satisfies(['status:manage'], 'status:write'))
    assert.ok(!satisfies(['status:manage'], 'status:value'))
    assert.ok(!satisfies(['status:write'], 'status:read'))
  })

  it('a status:value key sets the value and nothing else', () => {
    assert.equal(allowed(['status:value'], update('value')), true)
    assert.match(String(allowed(['status:value'], update('value', 'name'))), /status:write/)
    assert.match(String(allowed(['status:value'], create('value'))), /status:write/)
  })

  it('a status:write key sets any field but the access settings, and creates', () => {
    assert.equal(allowed(['status:write'], update('value', 'name', 'colorNo')), true)
    assert.equal(allowed(['status:write'], create('value')), true)
    assert.match(String(allowed(['status:write'], update('accessType'))), /status:manage/)
    assert.match(String(allowed(['status:write'], { kind: 'delete' })), /status:manage/)
  })

  it('status:* (the four status scopes) makes every write', () => {
    const all: Scope[] = ['status:read', 'status:value', 'status:write', 'status:manage']
    for (const [, write] of TABLE) assert.equal(allowed(all, write), true)
  })

  it('a caller without limits (a session) makes every write', () => {
    for (const [, write] of TABLE) assert.doesNotThrow(() => assertWriteScopes(undefined, write))
  })
})
