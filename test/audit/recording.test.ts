import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { newId } from '../../src/lib/ids.ts'
import { USER_SCOPES } from '../../src/modules/keys/scopes.ts'
import { ensureFirstUser } from '../../src/modules/users/first-user.ts'
import { asSession, GOOD_PASSWORD, signInUser, signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { createStatus, grant } from '../helpers/sharing.ts'

// The security log records each change where it happens (docs/security.md#security-log):
// every row acts as a person would through the API, then reads the event the account
// concerned finds first in its own log.

interface World {
  t: TestApp
  /** Ada: signed up with a password; her session cookie and a key of hers. */
  ada: { id: string; cookie: string; key: TestUser }
  /** Olivia: owns a status Ada may be offered a role on. */
  olivia: TestUser
  statusId: string
}

async function world(ctx: Lifetime): Promise<World> {
  const t = await makeApp(ctx, { deps: { signup: 'open' } })
  // the first user is the operator; Ada and Olivia are not
  await ensureFirstUser(t.database.db, t.app.plans)
  const { id, cookie } = await signUpUser(t, { email: 'ada@example.com', name: 'Ada' })
  const made = await asSession(t, cookie, 'POST', '/v1/user/api-keys', {
    label: 'laptop',
    scopes: [...USER_SCOPES],
  })
  assert.equal(made.statusCode, 201, made.body)
  const olivia = await t.user({ name: 'Olivia' })
  const status = await createStatus(t, olivia, 'door', { name: 'Door', value: 'open' })
  return { t, ada: { id, cookie, key: { id, key: made.json().key } }, olivia, statusId: status.id }
}

/** The events in `userId`'s log (`null`: of no account) that are not among `before`. */
async function recordedSince(t: TestApp, userId: string | null, before: Set<string>) {
  const rows = await t.database.db
    .selectFrom('security_events')
    .selectAll()
    .where('user_id', userId === null ? 'is' : '=', userId)
    .execute()
  return rows
    .filter((row) => !before.has(row.id))
    .map((row) => ({ ...row, detail: row.detail === null ? null : JSON.parse(row.detail) }))
}

const idsOf = async (t: TestApp) =>
  new Set(
    (await t.database.db.selectFrom('security_events').select('id').execute()).map((r) => r.id),
  )

interface Row {
  /** The rule: each action, the event recorded. */
  name: string
  act: (w: World) => Promise<unknown>
  /** Whose log gets it (default Ada's). */
  concerns?: (w: World) => string | null
  kind: string
  /** Who acted (default Ada; null: no one signed in). */
  actor?: (w: World) => string | null
  detail?: (w: World) => Record<string, unknown>
}

const ok = <R extends { statusCode: number; body: string }>(res: R, code: number): R => {
  assert.equal(res.statusCode, code, res.body)
  return res
}

const keyIdOf = async (w: World, label: string): Promise<string> => {
  const keys = (await w.t.request(w.ada.key, 'GET', '/v1/user/api-keys')).json()
  return keys.find((k: { label: string | null }) => k.label === label).id
}

const rows: Row[] = [
  {
    name: 'a sign-in with a password: signIn, method password',
    act: (w) => signInUser(w.t, { email: 'ada@example.com', password: GOOD_PASSWORD }),
    kind: 'signIn',
    detail: () => ({ method: 'password' }),
  },
  {
    name: 'a wrong password: signInFailed on the account, by no one',
    act: async (w) =>
      ok(
        await w.t.request(null, 'POST', '/v1/auth/login', {
          email: 'ADA@example.com',
          password: 'not my password at all',
        }),
        401,
      ),
    kind: 'signInFailed',
    actor: () => null,
    detail: () => ({ method: 'password', reason: 'wrongPassword' }),
  },
  {
    name: 'an address with no account: signInFailed of no account, the address not stored',
    act: async (w) =>
      ok(
        await w.t.request(null, 'POST', '/v1/auth/login', {
          email: 'nobody-here@example.com',
          password: 'guess guess guess',
        }),
        401,
      ),
    concerns: () => null,
    kind: 'signInFailed',
    actor: () => null,
    detail: () => ({ method: 'password', reason: 'unknownAddress' }),
  },
  {
    name: 'signing out: signOut',
    act: async (w) => ok(await asSession(w.t, w.ada.cookie, 'POST', '/v1/auth/logout'), 204),
    kind: 'signOut',
  },
  {
    name: 'a new password: passwordChanged',
    act: async (w) =>
      ok(
        await asSession(w.t, w.ada.cookie, 'PATCH', '/v1/user', {
          password: 'a brand new passphrase 7',
          currentPassword: GOOD_PASSWORD,
        }),
        200,
      ),
    kind: 'passwordChanged',
  },
  {
    name: 'a wrong current password when changing it: signInFailed, from her session',
    act: async (w) =>
      ok(
        await asSession(w.t, w.ada.cookie, 'PATCH', '/v1/user', {
          password: 'a brand new passphrase 7',
          currentPassword: 'not my password at all',
        }),
        403,
      ),
    kind: 'signInFailed',
    detail: () => ({ method: 'password', reason: 'wrongCurrentPassword' }),
  },
  {
    name: 'a new e-mail address (no SMTP): emailChanged with the new address',
    act: async (w) =>
      ok(
        await asSession(w.t, w.ada.cookie, 'PATCH', '/v1/user', { email: 'ada@lovelace.example' }),
        200,
      ),
    kind: 'emailChanged',
    detail: () => ({ email: 'ada@lovelace.example' }),
  },
  {
    name: 'a key made: keyCreated with its id, label and scopes',
    act: async (w) =>
      ok(await w.t.request(w.ada.key, 'POST', '/v1/user/api-keys', { label: 'phone' }), 201),
    kind: 'keyCreated',
    detail: () => ({ label: 'phone' }),
  },
  {
    name: 'a key rotated: keyRotated naming the key it replaced',
    act: async (w) =>
      ok(
        await w.t.request(
          w.ada.key,
          'POST',
          `/v1/user/api-keys/${await keyIdOf(w, 'laptop')}/rotate`,
          {
            graceSeconds: 60,
          },
        ),
        201,
      ),
    kind: 'keyRotated',
    detail: () => ({ label: 'laptop', graceSeconds: 60 }),
  },
  {
    name: 'a key revoked: keyRevoked',
    act: async (w) => {
      const made = ok(
        await w.t.request(w.ada.key, 'POST', '/v1/user/api-keys', { label: 'old' }),
        201,
      ).json()
      return ok(await w.t.request(w.ada.key, 'DELETE', `/v1/user/api-keys/${made.id}`), 204)
    },
    kind: 'keyRevoked',
    detail: () => ({ label: 'old' }),
  },
  {
    name: 'every key revoked: keysRevokedAll with how many',
    act: async (w) =>
      ok(await asSession(w.t, w.ada.cookie, 'POST', '/v1/user/api-keys/revoke-all', {}), 200),
    kind: 'keysRevokedAll',
    detail: () => ({ count: 1, kept: null }),
  },
  {
    name: 'a session ended from the list: sessionRevoked',
    act: async (w) => {
      const other = await signInUser(w.t)
      const list = (await asSession(w.t, other, 'GET', '/v1/user/sessions')).json()
      const mine = list.find((s: { current: boolean }) => s.current).id
      return ok(await asSession(w.t, w.ada.cookie, 'DELETE', `/v1/user/sessions/${mine}`), 204)
    },
    kind: 'sessionRevoked',
  },
  {
    name: 'a passkey deleted: passkeyRemoved',
    act: async (w) => {
      const id = newId()
      await w.t.database.db
        .insertInto('passkeys')
        .values({
          id,
          user_id: w.ada.id,
          credential_id: 'credential-1',
          public_key: 'AAAA',
          counter: 0,
          transports: null,
          name: 'Phone',
          created_at: new Date().toISOString(),
          last_used_at: null,
        })
        .execute()
      return ok(await asSession(w.t, w.ada.cookie, 'DELETE', `/v1/user/passkeys/${id}`), 204)
    },
    kind: 'passkeyRemoved',
  },
  {
    name: 'a passkey answer that does not verify: signInFailed on its account, by no one',
    act: async (w) => {
      await w.t.database.db
        .insertInto('passkeys')
        .values({
          id: newId(),
          user_id: w.ada.id,
          credential_id: 'credential-2',
          public_key: 'AAAA',
          counter: 0,
          transports: null,
          name: 'Laptop',
          created_at: new Date().toISOString(),
          last_used_at: null,
        })
        .execute()
      const options = ok(await w.t.request(null, 'POST', '/v1/auth/passkey/options'), 200).json()
      const clientData = {
        type: 'webauthn.get',
        challenge: options.options.challenge,
        origin: 'http://localhost',
      }
      return ok(
        await w.t.request(null, 'POST', '/v1/auth/passkey/login', {
          challengeId: options.challengeId,
          response: {
            id: 'credential-2',
            rawId: 'credential-2',
            type: 'public-key',
            clientExtensionResults: {},
            response: {
              clientDataJSON: Buffer.from(JSON.stringify(clientData)).toString('base64url'),
              authenticatorData: Buffer.from('x'.repeat(37)).toString('base64url'),
              signature: Buffer.from('not a signature').toString('base64url'),
            },
          },
        }),
        401,
      )
    },
    kind: 'signInFailed',
    actor: () => null,
    detail: () => ({ method: 'passkey', reason: 'notVerified' }),
  },
  {
    name: "a role offered to her: roleGranted in her log, by the status's owner",
    act: async (w) =>
      ok(
        await w.t.request(w.olivia, 'PUT', `/v1/status/${w.statusId}/users/${w.ada.id}`, {
          role: 'updater',
        }),
        202,
      ),
    kind: 'roleGranted',
    actor: (w) => w.olivia.id,
    detail: (w) => ({ statusId: w.statusId, role: 'updater', pending: true }),
  },
  {
    name: 'a role she accepts: roleAccepted',
    act: (w) => grant(w.t, w.olivia, w.statusId, w.ada.key, 'updater'),
    kind: 'roleAccepted',
    detail: (w) => ({ statusId: w.statusId, role: 'updater', via: 'invitation' }),
  },
  {
    name: 'her role lowered: roleChanged, from what it was',
    act: async (w) => {
      await grant(w.t, w.olivia, w.statusId, w.ada.key, 'updater')
      return ok(
        await w.t.request(w.olivia, 'PUT', `/v1/status/${w.statusId}/users/${w.ada.id}`, {
          role: 'subscriber',
        }),
        200,
      )
    },
    kind: 'roleChanged',
    actor: (w) => w.olivia.id,
    detail: (w) => ({ statusId: w.statusId, role: 'subscriber', from: 'updater' }),
  },
  {
    name: 'her role taken away: roleRemoved',
    act: async (w) => {
      await grant(w.t, w.olivia, w.statusId, w.ada.key, 'subscriber')
      return ok(
        await w.t.request(w.olivia, 'DELETE', `/v1/status/${w.statusId}/users/${w.ada.id}`),
        204,
      )
    },
    kind: 'roleRemoved',
    actor: (w) => w.olivia.id,
    detail: (w) => ({ statusId: w.statusId }),
  },
  {
    name: 'leaving a status: roleRemoved, by herself',
    act: async (w) => {
      await grant(w.t, w.olivia, w.statusId, w.ada.key, 'subscriber')
      return ok(
        await asSession(w.t, w.ada.cookie, 'DELETE', `/v1/status/${w.statusId}/subscription`),
        204,
      )
    },
    kind: 'roleRemoved',
    detail: (w) => ({ statusId: w.statusId, left: true }),
  },
]

describe('each action records its event', () => {
  it('signing up records the sign-in, with method signup', async (ctx) => {
    const w = await world(ctx)
    const events = await w.t.database.db
      .selectFrom('security_events')
      .selectAll()
      .where('user_id', '=', w.ada.id)
      .where('kind', '=', 'signIn')
      .execute()
    assert.equal(events.length, 1)
    assert.deepEqual(JSON.parse(events[0]?.detail ?? 'null').method, 'signup')
    assert.equal(events[0]?.actor_id, w.ada.id)
    assert.equal(events[0]?.ip, '127.0.0.1')
  })

  for (const row of rows)
    it(row.name, async (ctx) => {
      const w = await world(ctx)
      const before = await idsOf(w.t)
      await row.act(w)
      const concerns = row.concerns ? row.concerns(w) : w.ada.id
      // the one event of this kind the action recorded (it may record others on the way)
      const events = (await recordedSince(w.t, concerns, before)).filter((e) => e.kind === row.kind)
      assert.equal(events.length, 1, `one ${row.kind}`)
      const event = events[0] as (typeof events)[number]
      assert.equal(event.actor_id, row.actor ? row.actor(w) : w.ada.id)
      assert.equal(event.ip, '127.0.0.1')
      for (const [name, value] of Object.entries(row.detail?.(w) ?? {}))
        assert.deepEqual(event.detail?.[name], value, `detail.${name}`)
      // nothing typed at sign-in is kept: no address, no password
      const text = JSON.stringify(event)
      for (const secret of ['nobody-here', 'guess guess', 'not my password', GOOD_PASSWORD])
        assert.ok(!text.includes(secret), `the event holds no "${secret}"`)
    })
})
