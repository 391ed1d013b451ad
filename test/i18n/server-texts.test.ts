import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { createMailer } from '../../src/lib/mailer.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { makeApp, TEST_PLANS } from '../helpers/app.ts'
import { testClock } from '../helpers/clock.ts'
import { makeSubscription, startPushService } from '../helpers/push-service.ts'
import { createStatus } from '../helpers/sharing.ts'
import { linkIn, startSmtpServer } from '../helpers/smtp.ts'
import { startReceiver } from '../helpers/webhook-receiver.ts'

// The user's language (docs/languages.md): their e-mails and notification texts come in it,
// from the real SMTP server, push service and ntfy receiver; names and values stay as typed.

describe('languages: mails and notifications in the recipient’s language', () => {
  it('languages: after PATCH /v1/user {locale:"de"} the verification mail arrives in German at the SMTP server; null brings English back', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const t = await makeApp(ctx, {
      deps: { signup: 'open', mailer: createMailer(smtp.url, 'statusd <statusd@example.com>') },
    })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const json = async (method: string, path: string, body?: unknown, cookie?: string) =>
      fetch(base + path, {
        method,
        headers: {
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...(method !== 'GET' && { origin: base }),
          ...(cookie && { cookie }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
    const signedUp = await json('POST', '/v1/auth/signup', {
      email: 'ada@example.com',
      name: 'Ada',
      password: GOOD_PASSWORD,
    })
    assert.equal(signedUp.status, 201)
    const cookie = (signedUp.headers.getSetCookie()[0] ?? '').split(';')[0] as string
    const first = await smtp.next()
    assert.equal(first.subject, 'Confirm your e-mail address', 'no language chosen: English')

    const changed = await json('PATCH', '/v1/user', { locale: 'de' }, cookie)
    assert.equal(changed.status, 200)
    assert.equal(((await changed.json()) as { locale: string }).locale, 'de')
    assert.equal((await json('POST', '/v1/user/email/verification', {}, cookie)).status, 202)
    const german = await smtp.next()
    assert.equal(german.subject, 'Bestätige deine E-Mail-Adresse')
    assert.match(german.text ?? '', /^Hallo Ada,\n/)
    assert.match(german.text ?? '', /dass ada@example\.com deine Adresse bei statusd ist/)
    assert.ok(linkIn(german, `${base}/auth/verify/`), 'the link is there as in English')

    await json('PATCH', '/v1/user', { locale: null }, cookie)
    await json('POST', '/v1/user/email/verification', {}, cookie)
    assert.equal((await smtp.next()).subject, 'Confirm your e-mail address')
  })

  it('languages: an invitation mail is in the invitee’s language, else the inviter’s', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const t = await makeApp(ctx, {
      deps: {
        publicUrl: 'https://status.example.com',
        mailer: createMailer(smtp.url, 'statusd <statusd@example.com>'),
      },
    })
    const made = await createUser(t.database.db, TEST_PLANS, {
      name: 'Olivia',
      email: 'olivia@example.com',
      plan: 'unlimited',
      verified: true,
    })
    const owner = { id: made.id, key: (await createApiKey(t.database.db, made.id)).key }
    const status = await createStatus(t, owner, 'desk', { value: 'ON', name: 'Help desk' })
    const invite = async (email: string) => {
      const res = await t.request(owner, 'POST', `/v1/status/${status.id}/invitations`, {
        role: 'updater',
        email,
      })
      assert.equal(res.statusCode, 201, res.body)
      return smtp.next()
    }
    // Bo has an account in English; the inviter chose German
    await createUser(t.database.db, TEST_PLANS, {
      name: 'Bo',
      email: 'bo@example.com',
      plan: 'free',
      verified: true,
    })
    assert.equal((await t.request(owner, 'PATCH', '/v1/user', { locale: 'de' })).statusCode, 200)
    const toBo = await invite('bo@example.com')
    assert.equal(
      toBo.subject,
      'An invitation to a status on statusd',
      'Bo chose no language: English',
    )
    // nobody has the address: the mail is in the inviter's language
    const toNew = await invite('new@example.com')
    assert.equal(toNew.subject, 'Eine Einladung zu einem Status bei statusd')
    assert.match(
      toNew.text ?? '',
      /^Olivia <olivia@example\.com> nutzt statusd unter https:\/\/status\.example\.com und lädt dich zum Status „Help desk“ ein: Du kannst ihn bearbeiten/,
    )
    assert.match(toNew.text ?? '', /Der Link gilt bis \d{1,2}\. [A-Za-zä]+ \d{4} um \d\d:\d\d UTC/)
  })

  it('languages: a German user’s status change reaches web push and ntfy in German, the status’s name and values untouched', async (ctx) => {
    const push = await startPushService(ctx)
    const ntfy = await startReceiver(ctx)
    const t = await makeApp(ctx, {
      deps: {
        clock: testClock(Date.parse('2030-01-01T00:00:00Z')),
        webhookAllowNetworks: ['127.0.0.0/8'],
        notifications: { autoStart: false },
      },
    })
    const owner = await t.user()
    assert.equal((await t.request(owner, 'PATCH', '/v1/user', { locale: 'de' })).statusCode, 200)
    const browser = makeSubscription(`${push.origin}/push/de`)
    for (const channel of [
      { type: 'webpush', config: { subscription: browser.subscription } },
      { type: 'ntfy', name: 'Team', config: { server: `${ntfy.origin}/ntfy`, topic: 'ops' } },
    ]) {
      const made = await t.request(owner, 'POST', '/v1/user/channels', channel)
      assert.equal(made.statusCode, 201, made.body)
    }
    const status = (
      await t.request(owner, 'POST', '/v1/status-keys/door', { name: 'Door', value: 'OPEN' })
    ).json()
    const rule = await t.request(owner, 'PUT', `/v1/status/${status.id}/notifications`, {
      when: 'any',
    })
    assert.equal(rule.statusCode, 200, rule.body)
    const write = await t.request(owner, 'POST', '/v1/status-keys/door', { value: 'CLOSED' })
    assert.equal(write.statusCode, 200, write.body)
    await t.app.deliveryWorker.runOnce()

    const shown = JSON.parse(browser.decrypt((await push.next()).body).toString('utf8'))
    assert.equal(shown.title, 'Door: CLOSED')
    assert.equal(shown.body, 'Door ist jetzt „CLOSED“ (vorher „OPEN“).')
    const [published] = await ntfy.received(1)
    const body = JSON.parse(published?.body ?? '{}')
    assert.equal(body.title, 'Door: CLOSED')
    assert.equal(body.message, 'Door ist jetzt „CLOSED“ (vorher „OPEN“).')
  })

  it('languages: a channel test for a German user says so in German, naming the channel', async (ctx) => {
    const ntfy = await startReceiver(ctx)
    const t = await makeApp(ctx, {
      deps: { webhookAllowNetworks: ['127.0.0.0/8'], notifications: { autoStart: false } },
    })
    const owner = await t.user()
    await t.request(owner, 'PATCH', '/v1/user', { locale: 'de' })
    const made = await t.request(owner, 'POST', '/v1/user/channels', {
      type: 'ntfy',
      name: 'Handy',
      config: { server: `${ntfy.origin}/ntfy`, topic: 'ops' },
    })
    assert.equal(made.statusCode, 201, made.body)
    const test = await t.request(owner, 'POST', `/v1/user/channels/${made.json().id}/test`)
    assert.equal(test.statusCode, 202, test.body)
    await t.app.deliveryWorker.runOnce()
    const [published] = await ntfy.received(1)
    const body = JSON.parse(published?.body ?? '{}')
    assert.equal(body.title, 'Testbenachrichtigung von statusd')
    assert.match(body.message, /^Ein Test deines Kanals „Handy“ von statusd/)
  })
})
