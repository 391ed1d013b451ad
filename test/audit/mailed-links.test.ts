import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { createMailer } from '../../src/lib/mailer.ts'
import { signUpUser } from '../helpers/accounts.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts'

// The mailed links in the security log (docs/security.md#security-log): confirming an address
// and resetting a password are recorded with the sign-in each begins, from the client that
// followed the link, as the account's owner (who proved it by holding the link).

async function mailWorld(
  ctx: Lifetime,
): Promise<{ t: TestApp; smtp: TestSmtpServer; base: string }> {
  const smtp = await startSmtpServer(ctx)
  const t = await makeApp(ctx, {
    deps: { signup: 'open', mailer: createMailer(smtp.url, 'statusd <statusd@example.com>') },
  })
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = t.app.server.address() as AddressInfo
  return { t, smtp, base: `http://127.0.0.1:${port}` }
}

const tokenOf = (link: string) => link.slice(link.lastIndexOf('/') + 1)

/**
 * A user's events of the mailed links and the sign-ins they begin, by kind (events of one
 * instant have no order).
 */
async function eventsOf(t: TestApp, userId: string) {
  const rows = await t.database.db
    .selectFrom('security_events')
    .selectAll()
    .where('user_id', '=', userId)
    .where('kind', 'in', ['emailVerified', 'passwordReset', 'signIn'])
    .orderBy('kind')
    .execute()
  // the sign-up's own sign-in is not the link's
  return rows
    .filter((r) => !(r.kind === 'signIn' && r.detail?.includes('"signup"')))
    .map((r) => ({
      kind: r.kind,
      actor: r.actor_id,
      userAgent: r.user_agent,
      detail: r.detail === null ? null : JSON.parse(r.detail),
    }))
}

describe('mailed links in the security log', () => {
  it('following the verification link: emailVerified, then signIn with method verify', async (ctx) => {
    const w = await mailWorld(ctx)
    const { id } = await signUpUser(w.t, { email: 'ada@example.com' })
    const link = linkIn(await w.smtp.next(), `${w.base}/auth/verify/`)
    const res = await w.t.request(
      null,
      'POST',
      '/v1/auth/verify-email',
      { token: tokenOf(link) },
      { 'user-agent': 'Mail client browser' },
    )
    assert.equal(res.statusCode, 200, res.body)
    const events = await eventsOf(w.t, id)
    assert.deepEqual(
      events.map((e) => [e.kind, e.detail?.method ?? e.detail?.email, e.actor, e.userAgent]),
      [
        ['emailVerified', 'ada@example.com', id, 'Mail client browser'],
        ['signIn', 'verify', id, 'Mail client browser'],
      ],
    )
  })

  it('a password reset: passwordReset, then signIn with method reset', async (ctx) => {
    const w = await mailWorld(ctx)
    const { id } = await signUpUser(w.t, { email: 'ada@example.com' })
    await w.smtp.next() // the sign-up's verification link
    const asked = await w.t.request(null, 'POST', '/v1/auth/password-reset', {
      email: 'ada@example.com',
    })
    assert.equal(asked.statusCode, 202, asked.body)
    const link = linkIn(await w.smtp.next(), `${w.base}/auth/reset/`)
    const done = await w.t.request(null, 'POST', '/v1/auth/password-reset/confirm', {
      token: tokenOf(link),
      password: 'a new passphrase for ada 9',
    })
    assert.equal(done.statusCode, 200, done.body)
    const events = await eventsOf(w.t, id)
    assert.deepEqual(
      events.map((e) => [e.kind, e.detail?.method ?? null, e.actor]),
      [
        ['passwordReset', null, id],
        ['signIn', 'reset', id],
      ],
    )
  })
})
