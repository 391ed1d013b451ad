import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { newId } from '../../src/lib/ids.ts'
import {
  type InvitationLinkRow,
  insertInvitationLink,
  listRoleInvitations,
  replaceRoleInvitation,
  revokeInvitationLink,
  spendInvitationLinkUse,
} from '../../src/modules/statuses/invitations.repository.ts'
import { insertStatusUnlessKeyTaken } from '../../src/modules/statuses/statuses.repository.ts'
import { insertUser } from '../../src/modules/users/users.repository.ts'
import { onEngine, useStore } from '../helpers/store.ts'
import { statusRow, userRow } from './fixtures.ts'

const NOW = '2030-06-01T12:00:00.000Z'
const LATER = '2030-06-08T12:00:00.000Z'

describe(onEngine('invitations store'), () => {
  const store = useStore()

  async function link(over: Partial<InvitationLinkRow> = {}): Promise<InvitationLinkRow> {
    const owner = await insertUser(store().db, userRow())
    const status = await insertStatusUnlessKeyTaken(store().db, statusRow(owner.id))
    assert.ok(status)
    return insertInvitationLink(store().db, {
      id: newId(),
      status_id: status.id,
      token_hash: newId() + newId(),
      role: 'subscriber',
      email_key: null,
      max_uses: 1,
      uses_left: 1,
      created_by: owner.id,
      created_at: NOW,
      expires_at: LATER,
      revoked_at: null,
      ...over,
    })
  }

  it('spending a use counts down to 0, then spends nothing', async () => {
    const l = await link({ max_uses: 2, uses_left: 2 })
    assert.equal(await spendInvitationLinkUse(store().db, l.id, NOW), 1)
    assert.equal(await spendInvitationLinkUse(store().db, l.id, NOW), 0)
    assert.equal(await spendInvitationLinkUse(store().db, l.id, NOW), undefined)
  })

  it('an expired or revoked link spends nothing', async () => {
    const expired = await link({ expires_at: NOW })
    assert.equal(await spendInvitationLinkUse(store().db, expired.id, NOW), undefined)
    const revoked = await link()
    assert.equal(await revokeInvitationLink(store().db, revoked.status_id, revoked.id, NOW), true)
    assert.equal(await revokeInvitationLink(store().db, revoked.status_id, revoked.id, NOW), false)
    assert.equal(await spendInvitationLinkUse(store().db, revoked.id, NOW), undefined)
  })

  it('concurrent transactions spending the last use of a link: exactly one spends it', async () => {
    for (let round = 0; round < 5; round++) {
      const l = await link()
      const spent = await Promise.all(
        Array.from({ length: 5 }, () =>
          store()
            .db.transaction()
            .execute((tx) => spendInvitationLinkUse(tx, l.id, NOW)),
        ),
      )
      assert.deepEqual(
        spent.filter((s) => s !== undefined),
        [0],
        `round ${round}: ${spent}`,
      )
    }
  })

  it('a new invitation of a user to a status replaces the pending one', async () => {
    const owner = await insertUser(store().db, userRow({ name: 'Olivia' }))
    const invitee = await insertUser(store().db, userRow())
    const status = await insertStatusUnlessKeyTaken(store().db, statusRow(owner.id))
    assert.ok(status)
    const base = { status_id: status.id, user_id: invitee.id, invited_by: owner.id }
    await replaceRoleInvitation(store().db, {
      ...base,
      id: newId(),
      role: 'subscriber',
      created_at: NOW,
    })
    const second = newId()
    await replaceRoleInvitation(store().db, {
      ...base,
      id: second,
      role: 'updater',
      created_at: LATER,
    })
    const pending = await listRoleInvitations(store().db, { userId: invitee.id }, {})
    assert.deepEqual(
      pending.map((p) => [p.id, p.role, p.status_name, p.inviter_name]),
      [[second, 'updater', 'A status', 'Olivia']],
    )
  })
})
