import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { hashApiKey } from '../../src/lib/ids.ts'
import {
  consumeAuthToken,
  inspectAuthToken,
  issueAuthToken,
  KEEP_AFTER_EXPIRY_MS,
  recentAuthTokens,
  revokeAuthTokens,
} from '../../src/modules/users/auth-tokens.service.ts'
import { insertUser } from '../../src/modules/users/users.repository.ts'
import { testClock } from '../helpers/clock.ts'
import { onEngine, useStore } from '../helpers/store.ts'
import { userRow } from './fixtures.ts'

// One-time tokens (docs/accounts.md#e-mail): issued with a purpose, data and a lifetime,
// used at most once, then gone.

const HOUR = 60 * 60 * 1000

async function rejects(promise: Promise<unknown>, status: number, errorCode: string) {
  await assert.rejects(promise, (err: { statusCode?: number; errorCode?: string }) => {
    assert.equal(err.statusCode, status)
    assert.equal(err.errorCode, errorCode)
    return true
  })
}

describe(onEngine('one-time tokens'), () => {
  const store = useStore()

  it('a token is sdl_ + 43 base62 characters, stored only as its SHA-256, and works once', async () => {
    const clock = testClock()
    const user = await insertUser(store().db, userRow())
    const issued = await issueAuthToken(store().db, clock, {
      purpose: 'verify-email',
      userId: user.id,
      data: { email: 'a@example.com' },
      lifetimeMs: HOUR,
    })
    assert.match(issued.token, /^sdl_[A-Za-z0-9]{43}$/)
    assert.equal(issued.expiresAt, new Date(clock.now() + HOUR).toISOString())
    const row = await store()
      .db.selectFrom('auth_tokens')
      .selectAll()
      .where('id', '=', issued.id)
      .executeTakeFirstOrThrow()
    assert.equal(row.token_hash, hashApiKey(issued.token))
    assert.ok(!JSON.stringify(row).includes(issued.token), 'the token itself is not stored')

    assert.equal(await inspectAuthToken(store().db, clock, issued.token, 'verify-email'), 'valid')
    const used = await consumeAuthToken(store().db, clock, issued.token, 'verify-email')
    assert.deepEqual(used.data, { email: 'a@example.com' })
    assert.equal(used.userId, user.id)
    assert.equal(await inspectAuthToken(store().db, clock, issued.token, 'verify-email'), 'used')
    await rejects(consumeAuthToken(store().db, clock, issued.token, 'verify-email'), 410, 'gone')
  })

  it('an expired token answers 410; one of another purpose, or forged, 404', async () => {
    const clock = testClock()
    const user = await insertUser(store().db, userRow())
    const { token } = await issueAuthToken(store().db, clock, {
      purpose: 'password-reset',
      userId: user.id,
      lifetimeMs: HOUR,
    })
    await rejects(consumeAuthToken(store().db, clock, token, 'sign-in-link'), 404, 'notFound')
    assert.equal(await inspectAuthToken(store().db, clock, token, 'sign-in-link'), 'unknown')
    for (const forged of [
      `sdl_${'A'.repeat(43)}`,
      token.slice(0, -1),
      '',
      'x'.repeat(10_000),
      `${token}\u0000`,
    ]) {
      await rejects(consumeAuthToken(store().db, clock, forged, 'password-reset'), 404, 'notFound')
      assert.equal(await inspectAuthToken(store().db, clock, forged, 'password-reset'), 'unknown')
    }
    clock.advance(HOUR - 1)
    assert.equal(await inspectAuthToken(store().db, clock, token, 'password-reset'), 'valid')
    clock.advance(1)
    assert.equal(await inspectAuthToken(store().db, clock, token, 'password-reset'), 'expired')
    await rejects(consumeAuthToken(store().db, clock, token, 'password-reset'), 410, 'gone')
  })

  it('concurrent uses of one token: exactly one succeeds', async () => {
    const clock = testClock()
    const user = await insertUser(store().db, userRow())
    for (let round = 0; round < 5; round++) {
      const { token } = await issueAuthToken(store().db, clock, {
        purpose: 'sign-in-link',
        userId: user.id,
        lifetimeMs: HOUR,
      })
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () =>
          store()
            .db.transaction()
            .execute((tx) => consumeAuthToken(tx, clock, token, 'sign-in-link')),
        ),
      )
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
      for (const r of results)
        if (r.status === 'rejected')
          assert.equal((r.reason as { statusCode: number }).statusCode, 410)
    }
  })

  it('a use inside a transaction that rolls back leaves the token unused', async () => {
    const clock = testClock()
    const user = await insertUser(store().db, userRow())
    const { token } = await issueAuthToken(store().db, clock, {
      purpose: 'sign-in-link',
      userId: user.id,
      lifetimeMs: HOUR,
    })
    await assert.rejects(
      store()
        .db.transaction()
        .execute(async (tx) => {
          await consumeAuthToken(tx, clock, token, 'sign-in-link')
          throw new Error('the work failed')
        }),
      /the work failed/,
    )
    assert.equal(await inspectAuthToken(store().db, clock, token, 'sign-in-link'), 'valid')
  })

  it('revoking ends every unused token of that purpose and user, and no other', async () => {
    const clock = testClock()
    const [a, b] = [
      await insertUser(store().db, userRow()),
      await insertUser(store().db, userRow()),
    ]
    const issue = (userId: string, purpose: string) =>
      issueAuthToken(store().db, clock, { purpose, userId, lifetimeMs: HOUR })
    const a1 = await issue(a.id, 'password-reset')
    const a2 = await issue(a.id, 'password-reset')
    const aLink = await issue(a.id, 'sign-in-link')
    const b1 = await issue(b.id, 'password-reset')
    await revokeAuthTokens(store().db, clock, a.id, 'password-reset')
    const state = (t: { token: string }, purpose: string) =>
      inspectAuthToken(store().db, clock, t.token, purpose)
    assert.equal(await state(a1, 'password-reset'), 'used')
    assert.equal(await state(a2, 'password-reset'), 'used')
    assert.equal(await state(aLink, 'sign-in-link'), 'valid')
    assert.equal(await state(b1, 'password-reset'), 'valid')
    assert.equal(await recentAuthTokens(store().db, clock, a.id, 'password-reset', HOUR), 2)
    clock.advance(HOUR)
    assert.equal(await recentAuthTokens(store().db, clock, a.id, 'password-reset', HOUR), 0)
  })

  it('tokens expired longer than a day are deleted when the next is issued; a used one answers 410 until then', async () => {
    const clock = testClock()
    const user = await insertUser(store().db, userRow())
    const old = await issueAuthToken(store().db, clock, {
      purpose: 'sign-in-link',
      userId: user.id,
      lifetimeMs: HOUR,
    })
    clock.advance(HOUR + KEEP_AFTER_EXPIRY_MS - 1)
    await issueAuthToken(store().db, clock, { purpose: 'x', userId: null, lifetimeMs: HOUR })
    assert.equal(await inspectAuthToken(store().db, clock, old.token, 'sign-in-link'), 'expired')
    clock.advance(2)
    await issueAuthToken(store().db, clock, { purpose: 'x', userId: null, lifetimeMs: HOUR })
    assert.equal(await inspectAuthToken(store().db, clock, old.token, 'sign-in-link'), 'unknown')
  })
})
