import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import { ApiError } from '../../src/lib/errors.ts'
import { newId } from '../../src/lib/ids.ts'
import { createMailer } from '../../src/lib/mailer.ts'
import type {
  ChannelRow,
  NotificationEvent,
} from '../../src/modules/notifications/channel-types.ts'
import { DeliveryError } from '../../src/modules/notifications/channel-types.ts'
import {
  CHANNEL_CONFIRMATION_LIMITS,
  type EmailChannelConfig,
  emailChannelType,
} from '../../src/modules/notifications/email-channel.ts'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts'

// The e-mail channel (docs/notifications.md#e-mail): a real SMTP server receives every
// message; the test parses it and reads what a person would. The confirmation link is
// followed over a real socket: its page (GET) confirms nothing, its button (POST) does.

const PUBLIC_URL = 'https://status.example.com'
const HOUR = 60 * 60 * 1000

interface EmailWorld {
  t: TestApp
  smtp: TestSmtpServer
  clock: TestClock
  base: string
  type: ReturnType<typeof emailChannelType>
}

async function emailWorld(ctx: TestContext): Promise<EmailWorld> {
  const smtp = await startSmtpServer(ctx)
  const clock = testClock()
  const mailer = createMailer(smtp.url, 'statusd <statusd@status.example.com>')
  const t = await makeApp(ctx, { deps: { clock, mailer } })
  await t.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = t.app.server.address() as AddressInfo
  const type = emailChannelType({ db: t.database.db, mailer, clock })
  return { t, smtp, clock, base: `http://127.0.0.1:${port}`, type }
}

/** A stored e-mail channel, as the channels API stores one (not yet confirmed). */
async function storeChannel(
  w: Pick<EmailWorld, 't' | 'clock'>,
  userId: string,
  address: string,
): Promise<ChannelRow> {
  const at = new Date(w.clock.now()).toISOString()
  return w.t.database.db
    .insertInto('channels')
    .values({
      id: newId(),
      user_id: userId,
      type: 'email',
      name: 'my e-mail',
      config: JSON.stringify({ address } satisfies EmailChannelConfig),
      secret: null,
      verified_at: null,
      failing_since: null,
      disabled_reason: null,
      created_at: at,
      updated_at: at,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

const reread = (w: EmailWorld, id: string) =>
  w.t.database.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirstOrThrow()

const changed = (name: string, value: string | null, previousValue: string | null) =>
  ({
    type: 'status.changed',
    id: 'evt_1',
    at: '2026-11-29T10:00:00.000Z',
    status: {
      id: 'st_1',
      shareId: 'sh_1',
      name,
      value,
      previousValue,
      colorNo: 2,
      changeCount: 7,
      url: `${PUBLIC_URL}/s/sh_1`,
    },
  }) satisfies NotificationEvent

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof ApiError) return err
    throw err
  }
  assert.fail('expected a refusal')
}

describe('e-mail channel', () => {
  it('a new address is confirmed by a mailed link: opening it confirms nothing, its button does, once', async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    await w.type.beforeCreate?.({ userId: user.id, config: { address: 'ops@example.org' } })
    const channel = await storeChannel(w, user.id, 'ops@example.org')
    await w.type.afterCreate?.(channel, { address: 'ops@example.org' }, { publicUrl: w.base })

    const mail = await w.smtp.next()
    assert.equal(mail.to && !Array.isArray(mail.to) ? mail.to.text : '', 'ops@example.org')
    assert.match(mail.subject ?? '', /Confirm this address/)
    const link = linkIn(mail, `${w.base}/auth/channel/`)
    assert.ok(String(mail.html).includes(link), 'the HTML part holds the same link')

    // a mail scanner fetching the link (twice) confirms nothing
    for (let i = 0; i < 2; i++) {
      const page = await fetch(link, { headers: { 'sec-fetch-site': 'cross-site' } })
      assert.equal(page.status, 200)
      const body = await page.text()
      assert.match(body, /<form method="post">/)
      assert.match(body, /Confirm the address/)
    }
    assert.equal((await reread(w, channel.id)).verified_at, null)

    const confirmed = await fetch(link, { method: 'POST', headers: { origin: w.base } })
    assert.equal(confirmed.status, 200)
    assert.match(await confirmed.text(), /ops@example\.org/)
    assert.equal((await reread(w, channel.id)).verified_at, new Date(w.clock.now()).toISOString())

    const again = await fetch(link, { method: 'POST', headers: { origin: w.base } })
    assert.equal(again.status, 410, 'a link works once')
    assert.equal((await fetch(link)).status, 410)
  })

  it('the button from another site confirms nothing (403); a forged link 404; a link past 24 h 410', async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    const channel = await storeChannel(w, user.id, 'ops@example.org')
    await w.type.afterCreate?.(channel, { address: 'ops@example.org' }, { publicUrl: w.base })
    const link = linkIn(await w.smtp.next(), `${w.base}/auth/channel/`)

    const crossSite = await fetch(link, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    })
    assert.equal(crossSite.status, 403)
    assert.equal((await fetch(`${w.base}/auth/channel/sdl_forged`)).status, 404)
    assert.equal(
      (
        await fetch(`${w.base}/auth/channel/sdl_forged`, {
          method: 'POST',
          headers: { origin: w.base },
        })
      ).status,
      404,
    )
    w.clock.advance(CHANNEL_CONFIRMATION_LIMITS.lifetimeMs)
    assert.equal((await fetch(link)).status, 410)
    assert.equal((await fetch(link, { method: 'POST', headers: { origin: w.base } })).status, 410)
    assert.equal((await reread(w, channel.id)).verified_at, null)
  })

  it('a link confirms only the address it was mailed to: changed since, or the channel deleted: 410', async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    const channel = await storeChannel(w, user.id, 'ops@example.org')
    await w.type.afterCreate?.(channel, { address: 'ops@example.org' }, { publicUrl: w.base })
    const link = linkIn(await w.smtp.next(), `${w.base}/auth/channel/`)
    await w.t.database.db
      .updateTable('channels')
      .set({ config: JSON.stringify({ address: 'someone-else@example.org' }) })
      .where('id', '=', channel.id)
      .execute()
    assert.equal((await fetch(link, { method: 'POST', headers: { origin: w.base } })).status, 410)
    assert.equal((await reread(w, channel.id)).verified_at, null)

    const second = await storeChannel(w, user.id, 'ops@example.org')
    await w.type.afterCreate?.(second, { address: 'ops@example.org' }, { publicUrl: w.base })
    const secondLink = linkIn(await w.smtp.next(), `${w.base}/auth/channel/`)
    await w.t.database.db.deleteFrom('channels').where('id', '=', second.id).execute()
    assert.equal(
      (await fetch(secondLink, { method: 'POST', headers: { origin: w.base } })).status,
      410,
    )
  })

  it("the account's own confirmed address is confirmed at once, in any case of letters, and nothing is mailed", async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    await w.t.database.db
      .updateTable('users')
      .set({
        email: 'Ada@Example.org',
        email_key: 'ada@example.org',
        email_verified_at: new Date(w.clock.now()).toISOString(),
      })
      .where('id', '=', user.id)
      .execute()
    const channel = await storeChannel(w, user.id, 'ada@EXAMPLE.org')
    await w.type.afterCreate?.(channel, { address: 'ada@EXAMPLE.org' }, { publicUrl: w.base })
    assert.notEqual((await reread(w, channel.id)).verified_at, null)
    assert.equal(w.smtp.messages().length, 0)

    // an account address not yet confirmed is a stranger's address
    await w.t.database.db
      .updateTable('users')
      .set({ email_verified_at: null })
      .where('id', '=', user.id)
      .execute()
    const other = await storeChannel(w, user.id, 'ada@example.org')
    await w.type.afterCreate?.(other, { address: 'ada@example.org' }, { publicUrl: w.base })
    assert.equal((await reread(w, other.id)).verified_at, null)
    assert.equal((await w.smtp.next()).subject, 'Confirm this address for statusd notifications')
  })

  it('without SMTP the type is refused: 501 emailUnavailable', async (ctx) => {
    const t = await makeApp(ctx)
    const user = await t.user()
    const type = emailChannelType({ db: t.database.db, mailer: null })
    const err = await refusal(
      type.beforeCreate?.({ userId: user.id, config: { address: 'ops@example.org' } }) ??
        Promise.resolve(),
    )
    assert.equal(err.statusCode, 501)
    assert.equal(err.errorCode, 'emailUnavailable')
  })

  it('an address that is not one: 400 validationError on config.address', async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    for (const address of ['not an address', 'a@b', 'x@example.org\r\nBcc: victim@example.org']) {
      const err = await refusal(
        w.type.beforeCreate?.({ userId: user.id, config: { address } }) ?? Promise.resolve(),
      )
      assert.equal(err.errorCode, 'validationError', address)
      assert.equal(err.errors?.[0]?.field, 'config.address')
    }
  })

  it(`at most ${CHANNEL_CONFIRMATION_LIMITS.perHour} confirmation mails per user an hour: then 429, and an hour later again`, async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    for (let i = 0; i < CHANNEL_CONFIRMATION_LIMITS.perHour; i++) {
      const config = { address: `ops${i}@example.org` }
      await w.type.beforeCreate?.({ userId: user.id, config })
      const channel = await storeChannel(w, user.id, config.address)
      await w.type.afterCreate?.(channel, config, { publicUrl: w.base })
    }
    const err = await refusal(
      w.type.beforeCreate?.({ userId: user.id, config: { address: 'more@example.org' } }) ??
        Promise.resolve(),
    )
    assert.equal(err.statusCode, 429)
    assert.equal(err.errorCode, 'rateLimited')
    // another user is not held back
    const other = await w.t.user()
    await w.type.beforeCreate?.({ userId: other.id, config: { address: 'more@example.org' } })
    w.clock.advance(HOUR + 1)
    await w.type.beforeCreate?.({ userId: user.id, config: { address: 'more@example.org' } })
  })

  it("a change is mailed as text and HTML: the status's name, value, previous value, its link and the way to stop them", async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    const channel = { ...(await storeChannel(w, user.id, 'ops@example.org')), verified_at: 'x' }
    const result = await w.type.send(
      channel,
      { address: 'ops@example.org' },
      changed('Meeting room 4', 'BUSY', 'FREE'),
      { publicUrl: PUBLIC_URL },
    )
    assert.deepEqual(result, {})
    const mail = await w.smtp.next()
    assert.equal(mail.subject, 'Meeting room 4: BUSY')
    const text = mail.text ?? ''
    assert.match(text, /Meeting room 4 is now “BUSY” \(was “FREE”\)/)
    assert.match(text, /https:\/\/status\.example\.com\/s\/sh_1/)
    assert.match(text, /https:\/\/status\.example\.com\/notifications/)
    const html = mail.html || ''
    assert.match(html, /<a href="https:\/\/status\.example\.com\/s\/sh_1">/)
    assert.match(html, /https:\/\/status\.example\.com\/notifications/)

    // no value, and a stale notice
    await w.type.send(channel, { address: 'ops@example.org' }, changed('Build', null, 'RED'), {
      publicUrl: PUBLIC_URL,
    })
    assert.match((await w.smtp.next()).text ?? '', /Build is now no value \(was “RED”\)/)
    await w.type.send(
      channel,
      { address: 'ops@example.org' },
      { ...changed('Build', 'GREEN', 'RED'), type: 'status.stale' },
      { publicUrl: PUBLIC_URL },
    )
    const stale = await w.smtp.next()
    assert.equal(stale.subject, 'Build is stale')
    assert.match(stale.text ?? '', /last value is “GREEN”/)
  })

  it('the notice that another channel was turned off: says so, and leads to the notification settings', async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    const channel = { ...(await storeChannel(w, user.id, 'ops@example.org')), verified_at: 'x' }
    await w.type.send(
      channel,
      { address: 'ops@example.org' },
      {
        type: 'channel.disabled',
        id: 'evt_d',
        at: '2026-11-29T10:00:00.000Z',
        message: 'Your channel "team chat" failed for 24 hours and was turned off.',
      },
      { publicUrl: PUBLIC_URL },
    )
    const mail = await w.smtp.next()
    assert.equal(mail.subject, 'A notification channel was turned off')
    assert.match(mail.text ?? '', /"team chat" failed for 24 hours/)
    assert.match(
      mail.text ?? '',
      /Open your notification settings: https:\/\/status\.example\.com\/notifications/,
    )
  })

  it('hostile names and values inject no header and no HTML', async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    const channel = { ...(await storeChannel(w, user.id, 'ops@example.org')), verified_at: 'x' }
    const name = 'x\r\nBcc: victim@example.org\r\n<script>alert(1)</script>'
    const value = '"><img src=x onerror=alert(1)>'
    await w.type.send(channel, { address: 'ops@example.org' }, changed(name, value, '</p>&amp;'), {
      publicUrl: PUBLIC_URL,
    })
    const mail = await w.smtp.next()
    assert.equal(mail.bcc, undefined)
    assert.equal(mail.headers.get('bcc'), undefined)
    assert.ok(!(mail.subject ?? '').includes('\n'), 'the subject is one line')
    assert.match(mail.subject ?? '', /^x Bcc: victim@example\.org <script>/)
    const html = mail.html || ''
    assert.ok(!html.includes('<script>'), html)
    assert.ok(!html.includes('<img'), html)
    assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), html)
    assert.ok(html.includes('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'), html)
    assert.ok(html.includes('&lt;/p&gt;&amp;amp;'), html)
    // the plain text keeps the text as it was typed
    assert.ok((mail.text ?? '').includes('<script>alert(1)</script>'))
  })

  it('nothing is mailed to an address not confirmed (not even a test): a DeliveryError that no retry can help', async (ctx) => {
    const w = await emailWorld(ctx)
    const user = await w.t.user()
    const channel = await storeChannel(w, user.id, 'ops@example.org')
    await assert.rejects(
      w.type.send(
        channel,
        { address: 'ops@example.org' },
        { type: 'channel.test', id: 'evt_t', at: '2026-11-29T10:00:00.000Z' },
        { publicUrl: PUBLIC_URL },
      ),
      (err: unknown) => err instanceof DeliveryError && err.retryable === false,
    )
    assert.equal(w.smtp.messages().length, 0)
  })

  it('an SMTP server that is down: a DeliveryError worth retrying', async (ctx) => {
    const t = await makeApp(ctx)
    const user = await t.user()
    const clock = testClock()
    // port 1 on loopback: nothing listens there, the connection is refused at once
    const mailer = createMailer('smtp://127.0.0.1:1', 'statusd <s@example.com>')
    const type = emailChannelType({ db: t.database.db, mailer, clock })
    const channel = {
      ...(await storeChannel({ t, clock }, user.id, 'ops@example.org')),
      verified_at: 'x',
    }
    await assert.rejects(
      type.send(channel, { address: 'ops@example.org' }, changed('Build', 'GREEN', 'RED'), {
        publicUrl: PUBLIC_URL,
      }),
      (err: unknown) => err instanceof DeliveryError && err.retryable === true,
    )
  })
})

describe('e-mail channels through the API (POST /v1/user/channels)', () => {
  it('made unconfirmed, confirmed by the link, then a test arrives by mail through the worker', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const t = await makeApp(ctx, {
      deps: {
        mailer: createMailer(smtp.url, 'statusd <statusd@status.example.com>'),
        notifications: { autoStart: false },
      },
    })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const user = await t.user()
    const made = await t.request(user, 'POST', '/v1/user/channels', {
      type: 'email',
      config: { address: 'ops@example.org' },
    })
    assert.equal(made.statusCode, 201, made.body)
    const channel = made.json()
    assert.equal(channel.verified, false)
    assert.equal(channel.name, 'ops@example.org', 'named after its address by default')
    assert.equal(channel.secret, null)
    const test = await t.request(user, 'POST', `/v1/user/channels/${channel.id}/test`)
    assert.equal(test.statusCode, 409, 'no test before the address is confirmed')

    const link = linkIn(await smtp.next(), `${base}/auth/channel/`)
    assert.equal((await fetch(link, { method: 'POST', headers: { origin: base } })).status, 200)
    const read = await t.request(user, 'GET', `/v1/user/channels/${channel.id}`)
    assert.equal(read.json().verified, true)

    assert.equal(
      (await t.request(user, 'POST', `/v1/user/channels/${channel.id}/test`)).statusCode,
      202,
    )
    await t.app.deliveryWorker.runOnce()
    const mail = await smtp.next()
    assert.equal(mail.subject, 'Test notification from statusd')
    assert.match(mail.text ?? '', /A test of your channel "ops@example\.org"/)
  })

  it("the account's own confirmed address: 201 verified at once", async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const t = await makeApp(ctx, {
      deps: {
        mailer: createMailer(smtp.url, 's <s@example.com>'),
        notifications: { autoStart: false },
      },
    })
    const user = await t.user()
    await t.database.db
      .updateTable('users')
      .set({
        email: 'ada@example.org',
        email_key: 'ada@example.org',
        email_verified_at: new Date().toISOString(),
      })
      .where('id', '=', user.id)
      .execute()
    const made = await t.request(user, 'POST', '/v1/user/channels', {
      type: 'email',
      config: { address: 'Ada@example.org' },
    })
    assert.equal(made.statusCode, 201, made.body)
    assert.equal(made.json().verified, true)
    assert.equal(smtp.messages().length, 0)
  })

  it('without SMTP: 501 emailUnavailable, and no channel is made', async (ctx) => {
    const t = await makeApp(ctx, { deps: { notifications: { autoStart: false } } })
    const user = await t.user()
    const res = await t.request(user, 'POST', '/v1/user/channels', {
      type: 'email',
      config: { address: 'ops@example.org' },
    })
    assert.equal(res.statusCode, 501)
    assert.equal(res.json().errorCode, 'emailUnavailable')
    assert.deepEqual((await t.request(user, 'GET', '/v1/user/channels')).json(), [])
  })

  it('a mail server that does not take the confirmation: 503, and no channel is made', async (ctx) => {
    const t = await makeApp(ctx, {
      deps: {
        mailer: createMailer('smtp://127.0.0.1:1', 's <s@example.com>'),
        notifications: { autoStart: false },
      },
    })
    const user = await t.user()
    const res = await t.request(user, 'POST', '/v1/user/channels', {
      type: 'email',
      config: { address: 'ops@example.org' },
    })
    assert.equal(res.statusCode, 503, res.body)
    assert.equal(res.json().errorCode, 'unavailable')
    assert.deepEqual((await t.request(user, 'GET', '/v1/user/channels')).json(), [])
  })

  it('config is strict: no other property, an address that is one (400)', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const t = await makeApp(ctx, {
      deps: {
        mailer: createMailer(smtp.url, 's <s@example.com>'),
        notifications: { autoStart: false },
      },
    })
    const user = await t.user()
    for (const config of [
      { address: 'ops@example.org', cc: 'x@example.org' },
      { address: 'nope' },
      {},
      { address: 42 },
    ]) {
      const res = await t.request(user, 'POST', '/v1/user/channels', { type: 'email', config })
      assert.equal(res.statusCode, 400, JSON.stringify(config))
      assert.equal(res.json().errorCode, 'validationError')
    }
    assert.equal(smtp.messages().length, 0)
  })
})
