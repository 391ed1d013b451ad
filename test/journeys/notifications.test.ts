// Journeys through docs/notifications.md, as Grace sets up being told about her statuses in
// one day on one `statusd serve` that mails (SIGNUP=open, the real SMTP test server, webhooks
// allowed to loopback with WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8): at her desk (1280×800) and
// on her phone (390×844), in the file's one Chromium (test/helpers/journey.ts: each step
// fails on a console error, a page error, a CSP violation, a failed or unannounced 4xx/5xx
// request, or an axe violation on a screen it checks).
//
// 1. A webhook: added on the Notifications screen (its secret shown once), tested there;
//    a real receiver verifies the Standard Webhooks signature with that secret; the delivery
//    log shows the attempt.
// 2. A rule: set on a status's Notifications tab (changes to FAILING, her own changes
//    included); the value set on the status screen reaches the receiver, signed, with the
//    value before it.
// 3. An e-mail channel: added on the Notifications screen; the confirmation mail's link page
//    confirms it; a test mail and the next change's mail arrive; turned off and on again.
// 4. Browser push: the phone adds itself on the Notifications screen; the test arrives at the
//    push service encrypted for that browser, and decrypts to the test notice.
// 5. Staleness: a stale time set on the status screen and a "goes stale" rule on its tab; the
//    silence reaches the receiver as `status.stale`, and the share page turns grey.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import { journeyBrowser, startJourney } from '../helpers/journey.ts'
import {
  goTo,
  mailedLink,
  newStatus,
  onScreen,
  openTab,
  plansWithoutRateLimit,
  signInWithPassword,
  signUpWithPage,
} from '../helpers/journey-people.ts'
import { makeSubscription, startPushService } from '../helpers/push-service.ts'
import { type ReceivedRequest, startReceiver } from '../helpers/webhook-receiver.ts'

const chromium = journeyBrowser()

type Event = {
  type: string
  id: string
  status?: { name: string; value: string | null; previousValue: string | null; url: string }
}

describe('notifications', () => {
  it('Grace’s day: webhook, rule, e-mail channel, browser push, staleness', {
    skip: chromiumMissing(),
    timeout: 900_000,
  }, async (t) => {
    const receiver = await startReceiver(t)
    const push = await startPushService(t)
    const j = await startJourney(t, chromium(), {
      smtp: true,
      localhost: true,
      env: {
        SIGNUP: 'open',
        PLANS_FILE: plansWithoutRateLimit(t),
        WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
        STALE_CHECK_INTERVAL_MS: '1000',
      },
    })
    const origin = j.url
    j.expectResponse(401, '/v1/user')
    const desk = await j.open('desktop')
    const phone = await j.open('phone')
    let secret = ''
    let build = ''
    let backup = ''
    let seen = 0
    /** The receiver's next request, its signature verified with the secret the screen showed. */
    const nextEvent = async (): Promise<Event> => {
      seen += 1
      const request = (await receiver.received(seen))[seen - 1] as ReceivedRequest
      return new Webhook(secret).verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      }) as Event
    }
    const setValue = async (statusId: string, value: string) => {
      await desk.goto(`${origin}/statuses/${statusId}`)
      await desk.getByLabel('Value', { exact: true }).fill(value)
      await desk.getByRole('button', { name: 'Save changes' }).click()
      await desk.getByText('Saved.').waitFor()
    }

    await t.test('Grace signs up, confirms her address, makes two statuses', async () => {
      j.expectResponse(403, /^\/v1\/user\/(status|subscriptions)$/)
      await signUpWithPage(desk, origin, {
        name: 'Grace',
        email: 'grace@example.com',
        password: GOOD_PASSWORD,
      })
      const { link } = await mailedLink(j, 'grace@example.com', origin, '/auth/verify/')
      await desk.goto(link)
      await desk.getByRole('button', { name: 'Confirm my address' }).click()
      await desk.getByRole('link', { name: 'Continue' }).click()
      await onScreen(desk, 'Board')
      // the backup's silence starts now: its stale time is set at the end of the day
      backup = await newStatus(desk, { name: 'Nightly backup', value: 'OK', public: true })
      build = await newStatus(desk, { name: 'Build', value: 'PASSING' })
    })

    await t.test('adds a webhook, tests it: the receiver verifies the signature', async () => {
      await goTo(desk, 'Notifications')
      const form = desk.locator('form', { has: desk.getByRole('heading', { name: 'A webhook' }) })
      await form.getByLabel('Name').fill('Ops')
      await form.getByLabel('URL').fill(`${receiver.origin}/hook`)
      await form.getByLabel('Format').selectOption('standard')
      await form.getByRole('button', { name: 'Add the webhook' }).click()
      secret = await desk.locator('.secret-once').getByLabel('Secret').inputValue()
      assert.match(secret, /^whsec_/)
      await j.check(desk, 'notifications with a new secret, desktop')
      await desk.getByRole('button', { name: 'Test Ops' }).click()
      assert.equal((await nextEvent()).type, 'channel.test')
      const row = desk.locator('.delivery-log tbody tr').filter({ hasText: 'channel.test' })
      await row.waitFor()
      assert.match((await row.textContent()) ?? '', /delivered \(HTTP 200\)/)
    })

    await t.test(
      'a rule on the Build’s tab: its change to FAILING reaches the webhook',
      async () => {
        await desk.goto(`${origin}/statuses/${build}`)
        await onScreen(desk, 'Build')
        await openTab(desk, 'Notifications')
        // made in the app, the Build came with "any change by others"; Grace sets it herself
        // here, so she wants her own changes too
        await desk
          .getByRole('radio', { name: 'When it changes to or leaves chosen values' })
          .check()
        await desk
          .getByRole('group', { name: 'When it changes to' })
          .getByLabel('Values, one per line')
          .fill('FAILING')
        await desk.getByRole('checkbox', { name: /Only changes made by others/ }).uncheck()
        await desk.getByRole('button', { name: 'Save', exact: true }).click()
        await desk.getByText('Saved: you will be notified as chosen.').waitFor()
        await j.check(desk, 'a status’s notifications tab, desktop')
        await setValue(build, 'FAILING')
        const event = await nextEvent()
        assert.equal(event.type, 'status.changed')
        assert.deepEqual(
          [event.status?.name, event.status?.value, event.status?.previousValue],
          ['Build', 'FAILING', 'PASSING'],
        )
      },
    )

    await t.test(
      'an e-mail channel is confirmed from its mail; a test and a change arrive',
      async () => {
        await goTo(desk, 'Notifications')
        const form = desk.locator('form', {
          has: desk.getByRole('heading', { name: 'An e-mail address' }),
        })
        await form.getByLabel('Name').fill('Pager')
        await form.getByLabel('Address').fill('ops@example.org')
        await form.getByRole('button', { name: 'Add the address' }).click()
        await desk.getByText('A confirmation link was sent to the address').waitFor()
        const { link } = await mailedLink(j, 'ops@example.org', origin, '/auth/channel/')
        await phone.goto(link)
        await phone.getByRole('button', { name: 'Confirm the address' }).waitFor()
        await j.check(phone, 'channel confirmation page, phone')
        await phone.getByRole('button', { name: 'Confirm the address' }).click()
        await phone.getByRole('heading', { name: /confirmed/i }).waitFor()

        await desk.reload()
        const pager = desk.locator('.channel').filter({ hasText: 'Pager' })
        await pager.getByRole('button', { name: 'Test Pager' }).click()
        const test = await j.mail()
        assert.equal((test.to as { text: string }).text, 'ops@example.org')
        // the rule names no channels: every channel, the new one too
        await setValue(build, 'PASSING')
        await setValue(build, 'FAILING')
        const changed = await j.mail()
        assert.equal(changed.subject, 'Build: FAILING')
        assert.equal((await nextEvent()).status?.value, 'FAILING')

        // a channel can be turned off for a while, and on again
        await desk.goto(`${origin}/notifications`)
        await desk.getByRole('button', { name: 'Turn off Pager' }).click()
        await desk.getByText('Pager was turned off.').waitFor()
        await desk.getByRole('button', { name: 'Turn on Pager' }).click()
        await desk.getByText('Pager was turned on.').waitFor()
        await j.check(desk, 'notifications with two channels, desktop')
      },
    )

    await t.test('her phone adds itself for push; the test arrives encrypted for it', async () => {
      await signInWithPassword(phone, origin, 'grace@example.com', GOOD_PASSWORD)
      await phone.context().grantPermissions(['notifications'], { origin })
      await goTo(phone, 'Notifications')
      await phone.evaluate('navigator.serviceWorker.ready')
      // Headless Chromium cannot subscribe: pushManager.subscribe needs Google's push service,
      // which never answers here. That one call answers a subscription with keys this test
      // holds and an endpoint on the local push service; the rest is the app's and the
      // server's (the key fetched, the channel stored, the payload encrypted, RFC 8291).
      const browser = makeSubscription(`${push.origin}/push/grace-phone`)
      await phone.evaluate(`(() => {
        const subscription = ${JSON.stringify(browser.subscription)}
        PushManager.prototype.subscribe = async function () {
          return { endpoint: subscription.endpoint, toJSON: () => ({ ...subscription, expirationTime: null }) }
        }
      })()`)
      await phone.getByRole('button', { name: 'Add this browser' }).click()
      await phone.getByText(/This browser \(.+\) was added/).waitFor()
      await j.check(phone, 'notifications with this browser, phone')
      const item = phone.locator('.channel').filter({ hasText: 'this browser' })
      await item.getByRole('button', { name: /^Test / }).click()
      const sent = await push.next()
      const payload = JSON.parse(browser.decrypt(sent.body).toString('utf8'))
      assert.equal(payload.type, 'channel.test')
    })

    await t.test(
      'the backup goes quiet: a stale rule is told, the share page turns grey',
      async () => {
        await desk.goto(`${origin}/statuses/${backup}`)
        await onScreen(desk, 'Nightly backup')
        await openTab(desk, 'Notifications')
        await desk.getByRole('radio', { name: /When it goes stale/ }).check()
        await desk.getByRole('radio', { name: 'Only these' }).check()
        await desk.getByRole('checkbox', { name: 'Ops (webhook)' }).check()
        await desk.getByRole('button', { name: 'Save', exact: true }).click()
        await desk.getByText('Saved: you will be notified as chosen.').waitFor()
        await openTab(desk, 'Overview')
        await desk.getByLabel('Stale after (minutes)').fill('1')
        await desk.getByRole('button', { name: 'Save changes' }).click()
        await desk.getByText('Saved.').waitFor()
        const shareId = (
          await desk.request.get(`${origin}/v1/status/${backup}`).then((r) => r.json())
        ).shareId as string
        await phone.goto(`${origin}/s/${shareId}`)
        await phone.locator('#live[data-state="live"]').waitFor()

        // a minute after its last value (it may have passed already): told once, the page grey
        const event = await nextEvent()
        assert.equal(event.type, 'status.stale')
        assert.equal(event.status?.name, 'Nightly backup')
        await phone.locator('#value.stale').waitFor()
        await j.check(phone, 'a stale share page, phone')
      },
    )
  })
})
