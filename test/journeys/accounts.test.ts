// Journeys through docs/accounts.md, as Ada lives them in one day on one `statusd serve`
// that mails (SIGNUP=open, the real SMTP test server), on her phone (390×844) and her laptop
// (1280×800), in the file's one Chromium (test/helpers/journey.ts: each step fails on a
// console error, a page error, a CSP violation, a failed or unannounced 4xx/5xx request, or
// an axe violation on a screen it checks).
//
// 1. Signing up on the phone, confirming the address from the mail: the sign-up screen, the
//    mailed link's page and its button; the account then reads as confirmed. Until then the
//    board says where the link went, sends it again on request, and asks for nothing the
//    account may not see.
// 2. Signing in on the laptop, seeing both browsers, signing the phone out from the laptop,
//    then signing out: the sign-in screen, the account's signed-in browsers, the sign-out
//    button; the phone finds itself signed out.
// 3. A new e-mail address: asked for on the account screen, confirmed from the mail sent to
//    the new address; the new address signs in.
// 4. A passkey: added on the account screen with Chromium's virtual authenticator, signing
//    in with it alone, deleted again.
// 5. A device key: a status made on the New status screen, a key confined to it with only
//    `status:value` made on the keys screen; the device sets the value over HTTP, the board
//    shows it, nothing else is open to the key; revoked on the keys screen, it stops.
// 6. Locking an attacker out: a password changed on the account screen signs every other
//    browser out; "Revoke all keys" and "Sign out everywhere else" end a leaked key and the
//    phone's new session.
// The operator's sign-in link and the password reset mail are sign-in-links.test.ts's.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Request } from 'playwright-core'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import { journeyBrowser, startJourney } from '../helpers/journey.ts'
import {
  confirmDialog,
  fitsTheScreen,
  goTo,
  holdPasskeys,
  mailedLink,
  newStatus,
  onScreen,
  plansWithoutRateLimit,
  signInWithPassword,
  signOut,
} from '../helpers/journey-people.ts'

const chromium = journeyBrowser()

describe('accounts', () => {
  it('Ada’s day: signs up, confirms, signs in and out, moves address, passkey, device key, locks out', {
    skip: chromiumMissing(),
    timeout: 900_000,
  }, async (t) => {
    const j = await startJourney(t, chromium(), {
      smtp: true,
      localhost: true,
      env: {
        SIGNUP: 'open',
        PLANS_FILE: plansWithoutRateLimit(t),
      },
    })
    const origin = j.url
    // the app asks who is signed in whenever it starts: nobody, signed out, is a 401
    j.expectResponse(401, '/v1/user')
    const phone = await j.open('phone')
    const laptop = await j.open('desktop')
    let email = 'ada@example.com'
    let password = GOOD_PASSWORD
    // what the phone asks for while the account is not yet confirmed
    const askedUnconfirmed: string[] = []
    let newLink = ''
    const noteAsked = (request: Request) => {
      const { pathname } = new URL(request.url())
      if (/^\/v1\/user\/(status|subscriptions)$/.test(pathname)) askedUnconfirmed.push(pathname)
    }
    const sessionsOf = (page: typeof laptop) =>
      page.locator('section', { has: page.getByRole('heading', { name: 'Signed-in browsers' }) })

    await t.test('signs up on her phone', async () => {
      await phone.goto(origin)
      await onScreen(phone, 'Sign in')
      await phone.getByRole('link', { name: 'Create an account' }).click()
      await onScreen(phone, 'Create an account')
      await j.check(phone, 'sign-up, phone')
      await phone.getByLabel('Name').fill('Ada')
      await phone.getByLabel('E-mail').fill(email)
      await phone.getByLabel('Password').fill(password)
      // an account not yet confirmed may not list statuses: the board does not ask (no 403)
      phone.on('request', noteAsked)
      await phone.getByRole('button', { name: 'Create account' }).click()
      await onScreen(phone, 'Board')
      await phone.getByRole('heading', { name: 'Confirm your e-mail address' }).waitFor()
      await phone.getByText(`The link to confirm it was mailed to ${email}.`).waitFor()
      assert.ok(await fitsTheScreen(phone), 'the board fits the phone')
      await j.check(phone, 'the board before confirming, phone')
    })

    await t.test('the board of an account not yet confirmed sends the link again', async () => {
      const first = await mailedLink(j, email, origin, '/auth/verify/')
      await phone.getByRole('button', { name: 'Send the link again' }).click()
      await phone.getByText(`A new link was mailed to ${email}.`).waitFor()
      const again = await mailedLink(j, email, origin, '/auth/verify/')
      assert.notEqual(again.link, first.link, 'a new link')
      newLink = again.link
    })

    await t.test('confirms her address from the mail, on the phone', async () => {
      const link = newLink
      phone.off('request', noteAsked)
      await phone.goto(link)
      await phone.getByRole('button', { name: 'Confirm my address' }).waitFor()
      await j.check(phone, 'the confirmation link’s page, phone')
      await phone.getByRole('button', { name: 'Confirm my address' }).click()
      await phone.getByRole('heading', { name: 'Address confirmed' }).waitFor()
      await phone.getByRole('link', { name: 'Continue' }).click()
      await onScreen(phone, 'Board')
      await goTo(phone, 'Account')
      await phone.getByLabel('E-mail', { exact: true }).waitFor()
      assert.equal(await phone.getByText('Not confirmed yet').count(), 0, 'confirmed')
      await j.check(phone, 'account, phone')
    })

    await t.test(
      'the board of an account not yet confirmed asks for nothing it may not see',
      () => {
        assert.deepEqual(askedUnconfirmed, [])
      },
    )

    await t.test('signs in on her laptop and signs the phone out from there', async () => {
      await signInWithPassword(laptop, origin, email, password)
      await goTo(laptop, 'Account')
      const sessions = sessionsOf(laptop)
      await sessions.locator('.item').nth(1).waitFor()
      assert.equal(await sessions.locator('.item').count(), 2, 'the phone and the laptop')
      await sessions.locator('.item.current').getByText('This browser').waitFor()
      await j.check(laptop, 'account with two browsers, desktop')
      await sessions
        .locator('.item:not(.current)')
        .getByRole('button', { name: /^Sign out/ })
        .click()
      await confirmDialog(laptop, 'Sign it out')
      await laptop.getByText('That browser was signed out.').waitFor()
      // the phone, opened again, is signed out
      await phone.reload()
      await onScreen(phone, 'Sign in')
      await signOut(laptop)
      await laptop.reload()
      await onScreen(laptop, 'Sign in')
      await j.check(laptop, 'sign-in after signing out, desktop')
    })

    await t.test(
      'changes her address on the laptop and confirms the new one from its mail',
      async () => {
        await signInWithPassword(laptop, origin, email, password)
        await goTo(laptop, 'Account')
        const newEmail = 'ada@lovelace.example'
        await laptop.getByLabel('E-mail', { exact: true }).fill(newEmail)
        await laptop.getByRole('button', { name: 'Save profile' }).click()
        await laptop.getByText(`A link was mailed to ${newEmail}`).waitFor()
        const { link } = await mailedLink(j, newEmail, origin, '/auth/verify/')
        await laptop.goto(link)
        await laptop.getByRole('button', { name: 'Confirm my address' }).click()
        await laptop.getByText(`${newEmail} is confirmed`).waitFor()
        await laptop.getByRole('link', { name: 'Continue' }).click()
        await onScreen(laptop, 'Board')
        await goTo(laptop, 'Account')
        assert.equal(await laptop.getByLabel('E-mail', { exact: true }).inputValue(), newEmail)
        email = newEmail
        await signOut(laptop)
        await signInWithPassword(laptop, origin, email, password)
      },
    )

    await t.test('adds a passkey on the laptop, signs in with it alone, deletes it', async () => {
      await holdPasskeys(laptop)
      await goTo(laptop, 'Account')
      await laptop.getByLabel('Name of the new passkey').fill('Laptop')
      await laptop.bringToFront()
      await laptop.getByRole('button', { name: 'Add a passkey' }).click()
      await laptop.getByText('Passkey “Laptop” added.').waitFor()
      await j.check(laptop, 'account with a passkey, desktop')
      await signOut(laptop)
      await laptop.bringToFront()
      await laptop.getByRole('button', { name: 'Use a passkey' }).click()
      // signed in: a sign-out leads to a plain sign-in screen, so the board follows
      await onScreen(laptop, 'Board')
      await laptop.getByRole('button', { name: 'Sign out', exact: true }).waitFor()
      await goTo(laptop, 'Account')
      await laptop.getByRole('button', { name: 'Delete Laptop' }).click()
      await confirmDialog(laptop, 'Delete the passkey')
      await laptop.getByText('Passkey “Laptop” deleted.').waitFor()
      await signOut(laptop)
      // the device still offers it; the service no longer takes it
      j.expectResponse(401, '/v1/auth/passkey/login')
      await laptop.bringToFront()
      await laptop.getByRole('button', { name: 'Use a passkey' }).click()
      await laptop.getByRole('alert').waitFor()
      await signInWithPassword(laptop, origin, email, password)
    })

    await t.test(
      'makes a key for the door sensor that sets the door and nothing else',
      async () => {
        await newStatus(laptop, { name: 'Front door', key: 'front-door', value: 'SHUT' })
        const backDoor = await newStatus(laptop, { name: 'Back door', value: 'SHUT' })
        await goTo(laptop, 'API keys')
        await laptop.getByText('Create a key').click()
        await laptop.getByLabel('Label').fill('door sensor')
        for (const scope of ['status:write', 'status:manage'])
          await laptop.getByRole('checkbox', { name: new RegExp(`^${scope}:`) }).uncheck()
        await laptop.getByRole('radio', { name: /Only these/ }).check()
        await laptop.getByRole('checkbox', { name: 'Front door' }).check()
        await laptop.getByRole('button', { name: 'Create the key' }).click()
        const secret = await laptop.locator('.secret-once').getByLabel('Secret').inputValue()
        await j.check(laptop, 'keys with a new secret, desktop')
        await laptop.getByRole('button', { name: 'I have copied it' }).click()

        // the sensor: a program with the key, over HTTP (docs/accounts.md#scoped-keys)
        const sensor = (method: string, path: string, body?: unknown) =>
          fetch(origin + path, {
            method,
            headers: { 'service-api-key': secret, 'content-type': 'application/json' },
            ...(body !== undefined && { body: JSON.stringify(body) }),
          })
        const set = await sensor('POST', '/v1/status-keys/front-door', { value: 'OPEN' })
        assert.equal(set.status, 200, await set.text())
        assert.equal(
          (await sensor('PATCH', `/v1/status/${backDoor}`, { value: 'OPEN' })).status,
          404,
        )
        const rename = await sensor('POST', '/v1/status-keys/front-door', { name: 'Side door' })
        assert.equal(rename.status, 403)

        await goTo(laptop, 'Board')
        await laptop
          .locator('li.board-tile')
          .filter({ has: laptop.getByRole('heading', { name: 'Front door', exact: true }) })
          .locator('.value-chip')
          .filter({ hasText: 'OPEN' })
          .waitFor()
        await goTo(laptop, 'API keys')
        await laptop.getByRole('button', { name: /^Revoke door sensor/ }).click()
        await confirmDialog(laptop, 'Revoke the key')
        await laptop.getByText('door sensor was revoked').waitFor()
        const after = await sensor('POST', '/v1/status-keys/front-door', { value: 'SHUT' })
        assert.equal(after.status, 401)
        await j.check(laptop, 'keys after revoking, desktop')
      },
    )

    await t.test(
      'a new password on the laptop signs her phone out; then every key and every other browser',
      async () => {
        await signInWithPassword(phone, origin, email, password)
        await goTo(laptop, 'Account')
        await laptop.getByLabel('Current password').fill(password)
        await laptop.getByLabel('New password').fill('a kite over the dunes 9')
        await laptop.getByRole('button', { name: 'Change password' }).click()
        await laptop.getByText('Every other browser signed in as you was signed out').waitFor()
        password = 'a kite over the dunes 9'
        await phone.reload()
        await onScreen(phone, 'Sign in')
        await signInWithPassword(phone, origin, email, password)
        await j.check(phone, 'board signed in again, phone')

        // a key may have leaked, and the phone been used by someone else: everything at once
        await goTo(laptop, 'API keys')
        await laptop.getByText('Create a key').click()
        await laptop.getByLabel('Label').fill('backup script')
        await laptop.getByRole('button', { name: 'Create the key' }).click()
        const leaked = await laptop.locator('.secret-once').getByLabel('Secret').inputValue()
        await laptop.getByRole('button', { name: 'I have copied it' }).click()
        await laptop.getByRole('button', { name: 'Revoke all keys' }).click()
        await confirmDialog(laptop, 'Revoke them')
        await laptop.getByText('1 key was revoked.').waitFor()
        const tried = await fetch(`${origin}/v1/checkAuth`, {
          headers: { 'service-api-key': leaked },
        })
        assert.equal(tried.status, 401)
        await goTo(laptop, 'Account')
        await laptop.getByRole('button', { name: 'Sign out everywhere else' }).click()
        await confirmDialog(laptop, 'Sign them out')
        await laptop.getByText('Every other browser was signed out.').waitFor()
        await phone.reload()
        await onScreen(phone, 'Sign in')
        await j.check(laptop, 'account after signing out everywhere else, desktop')
      },
    )
  })
})
