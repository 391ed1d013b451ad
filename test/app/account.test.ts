import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { createMailer } from '../../src/lib/mailer.ts'
import { asSession, GOOD_PASSWORD, signInUser } from '../helpers/accounts.ts'
import {
  type AppServer,
  appServer,
  expectScreen,
  openApp,
  type Person,
  signUpPerson,
} from '../helpers/app-browser.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import { startSmtpServer } from '../helpers/smtp.ts'
import { startReceiver } from '../helpers/webhook-receiver.ts'

// The account screen (docs/app.md#account) in real Chromium: profile, password, passkeys
// (with Chromium's virtual authenticator as the person's device), signed-in browsers. Also
// the axe pass over this part of the app (keys, account, notifications), one browser per
// colour scheme and width.

/** A session of `person` started elsewhere (another browser), through the API. */
const anotherSession = (server: AppServer, person: Person) =>
  signInUser(server.t, { email: person.email, password: GOOD_PASSWORD })

/** Whether a session cookie still signs in. */
const signsIn = async (server: AppServer, cookie: string) =>
  (await asSession(server.t, cookie, 'GET', '/v1/user')).statusCode === 200

async function confirm(page: Page, name: string): Promise<void> {
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('button', { name }).click()
  await dialog.waitFor({ state: 'hidden' })
}

describe('the account screen', { skip: chromiumMissing(), timeout: 360_000 }, () => {
  it('changes the name; a new e-mail address is mailed a link and the screen says so', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const server = await appServer(ctx, {
      mailer: createMailer(smtp.url, 'statusd <statusd@example.com>'),
    })
    const person = await signUpPerson(server, { name: 'Ada' })
    await smtp.next() // the sign-up's verification link
    const { page } = await openApp(ctx, server, { person, path: '/account' })
    await expectScreen(page, 'Account')
    await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace')
    await page.getByRole('button', { name: 'Save profile' }).click()
    await page.getByText('Saved.', { exact: true }).waitFor()
    await page.locator('.who-name').filter({ hasText: 'Ada Lovelace' }).waitFor()

    await page.getByLabel('E-mail', { exact: true }).fill('ada@example.org')
    await page.getByRole('button', { name: 'Save profile' }).click()
    await page.getByText('A link was mailed to ada@example.org').waitFor()
    const mail = await smtp.next()
    assert.equal((mail.to as { text: string }).text, 'ada@example.org')
    // the address changes only when the link is followed
    const profile = (await asSession(server.t, person.cookie, 'GET', '/v1/user')).json()
    assert.equal(profile.email, person.email)
    assert.equal(profile.name, 'Ada Lovelace')
  })

  it('an unconfirmed address is said to have a mailed link only when this statusd sends mail', async (ctx) => {
    // e-mail off: nothing was mailed, so nothing is to be followed
    const quiet = await appServer(ctx)
    const ada = await signUpPerson(quiet, { name: 'Ada' })
    assert.equal(
      (await asSession(quiet.t, ada.cookie, 'GET', '/v1/user')).json().emailVerified,
      false,
    )
    const off = await openApp(ctx, quiet, { person: ada, path: '/account' })
    await expectScreen(off.page, 'Account')
    await off.page.getByText('This statusd sends no mail').waitFor()
    assert.equal(await off.page.getByText('follow the link mailed to it').count(), 0)

    // e-mail on: the sign-up's link was mailed
    const smtp = await startSmtpServer(ctx)
    const mailing = await appServer(ctx, {
      mailer: createMailer(smtp.url, 'statusd <statusd@example.com>'),
    })
    const grace = await signUpPerson(mailing, { name: 'Grace' })
    await smtp.next()
    const on = await openApp(ctx, mailing, { person: grace, path: '/account' })
    await expectScreen(on.page, 'Account')
    await on.page.getByText('Not confirmed yet: follow the link mailed to it.').waitFor()
  })

  it('changes the password: the API’s rules show at the field (a wrong current password in words, no field name), other sessions end, this one stays', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const elsewhere = await anotherSession(server, person)
    const { page } = await openApp(ctx, server, {
      person,
      path: '/account',
      allowConsoleErrors: true,
    })
    await expectScreen(page, 'Account')

    await page.getByLabel('Current password').fill('not my password at all')
    await page.getByLabel('New password').fill('a new and long password 7')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByRole('alert').waitFor()
    assert.equal(await page.getByRole('alert').textContent(), 'The current password is wrong')
    await page
      .locator('#main .field-error')
      .filter({ hasText: 'is not your current password' })
      .waitFor()
    assert.doesNotMatch((await page.locator('#main').textContent()) ?? '', /currentPassword/)
    assert.ok(await signsIn(server, elsewhere), 'a refused change ends nothing')

    // a password the API's rules refuse: its own message, at the field
    await page.getByLabel('Current password').fill(GOOD_PASSWORD)
    await page.getByLabel('New password').fill('too short')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.locator('#main .field-error').filter({ hasText: /12/ }).waitFor()

    await page.getByLabel('New password').fill('a new and long password 7')
    await page.getByRole('button', { name: 'Change password' }).click()
    await page.getByText('Every other browser signed in as you was signed out').waitFor()
    assert.equal(await signsIn(server, elsewhere), false, 'the other session ended')
    assert.ok(await signsIn(server, person.cookie), 'this one goes on')
    const login = await server.t.request(null, 'POST', '/v1/auth/login', {
      email: person.email,
      password: 'a new and long password 7',
    })
    assert.equal(login.statusCode, 200)
  })

  it('registers a passkey with the device’s authenticator, renames it; signed out, it signs in; deleted, it does not', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const { page, context } = await openApp(ctx, server, { person, path: '/account' })
    await expectScreen(page, 'Account')
    const cdp = await context.newCDPSession(page)
    await cdp.send('WebAuthn.enable')
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    })

    await page.getByLabel('Name of the new passkey').fill('Work laptop')
    await page.getByRole('button', { name: 'Add a passkey' }).click()
    await page.getByText('Passkey “Work laptop” added.').waitFor()
    await page.getByRole('button', { name: 'Rename Work laptop' }).click()
    await page.getByLabel('New name for Work laptop').fill('Old laptop')
    await page.getByRole('button', { name: 'Save name' }).click()
    await page.getByText('Passkey renamed “Old laptop”.').waitFor()
    const listed = (await asSession(server.t, person.cookie, 'GET', '/v1/user/passkeys')).json()
    assert.deepEqual(
      listed.map((p: { name: string }) => p.name),
      ['Old laptop'],
    )

    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
    assert.equal(credentials.length, 1, 'the device holds the passkey')

    // sign out, then in with the passkey alone, with the sign-in screen's button
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await expectScreen(page, 'Sign in')
    await page.getByRole('button', { name: 'Use a passkey' }).click()
    await expectScreen(page, 'Board')
    // the browser's new session (the one it signed out of is gone) began with the passkey
    const sessions = (await page.evaluate("fetch('/v1/user/sessions').then((r) => r.json())")) as {
      method: string
      current: boolean
    }[]
    assert.equal(sessions.find((s) => s.current)?.method, 'passkey')

    // deleted, it signs no one in
    await page.getByRole('link', { name: 'Account' }).click()
    await expectScreen(page, 'Account')
    await page.getByRole('button', { name: 'Delete Old laptop' }).click()
    await confirm(page, 'Delete the passkey')
    await page.getByText('Passkey “Old laptop” deleted.').waitFor()
    assert.deepEqual(await page.evaluate("fetch('/v1/user/passkeys').then((r) => r.json())"), [])
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await expectScreen(page, 'Sign in')
    await page.getByRole('button', { name: 'Use a passkey' }).click()
    await page.getByRole('alert').waitFor()
    await expectScreen(page, 'Sign in')
  })

  it('lists the signed-in browsers with this one marked; signs out one, then every other', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const first = await anotherSession(server, person)
    const second = await anotherSession(server, person)
    const { page } = await openApp(ctx, server, { person, path: '/account' })
    await expectScreen(page, 'Account')
    const sessions = page.locator('section', {
      has: page.getByRole('heading', { name: 'Signed-in browsers' }),
    })
    await sessions.locator('.item').nth(2).waitFor()
    assert.equal(await sessions.locator('.item.current').count(), 1)
    await sessions.locator('.item.current').getByText('This browser').waitFor()
    assert.equal(await sessions.locator('.item.current').getByRole('button').count(), 0)

    await sessions
      .locator('.item:not(.current)')
      .first()
      .getByRole('button', { name: /^Sign out/ })
      .click()
    await confirm(page, 'Sign it out')
    await page.getByText('That browser was signed out.').waitFor()
    assert.equal(await sessions.locator('.item').count(), 2)
    const alive = [await signsIn(server, first), await signsIn(server, second)]
    assert.deepEqual(alive.sort(), [false, true], 'exactly one of the two ended')

    await page.getByRole('button', { name: 'Sign out everywhere else' }).click()
    await confirm(page, 'Sign them out')
    await page.getByText('Every other browser was signed out.').waitFor()
    assert.equal(await signsIn(server, first), false)
    assert.equal(await signsIn(server, second), false)
    assert.ok(await signsIn(server, person.cookie))
    assert.equal(await sessions.locator('.item').count(), 1)
  })

  it('hostile names are shown as text, and nothing overflows at 375 px', async (ctx) => {
    const server = await appServer(ctx)
    const hostile = '<img src=x onerror=alert(1)>\u202E\u200B'
    const person = await signUpPerson(server, { name: hostile })
    await anotherSession(server, person)
    const { page } = await openApp(ctx, server, {
      person,
      path: '/account',
      viewport: { width: 375, height: 800 },
    })
    const dialogs: string[] = []
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      dialog.dismiss().catch(() => {})
    })
    await expectScreen(page, 'Account')
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), hostile)
    assert.equal(await page.locator('main img').count(), 0)
    assert.deepEqual(dialogs, [])
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'))
  })

  it('an address not confirmed yet: making a key or a status says to follow the mailed link, and sends it again', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const server = await appServer(ctx, {
      mailer: createMailer(smtp.url, 'statusd <statusd@example.com>'),
    })
    const person = await signUpPerson(server, { name: 'Ada' })
    await smtp.next() // the sign-up's verification link, not followed
    // the refused requests are 403s, which the browser logs
    const { page } = await openApp(ctx, server, {
      person,
      path: '/keys',
      allowConsoleErrors: true,
    })
    await expectScreen(page, 'API keys')
    await page.getByText('Create a key').click()
    await page.getByLabel('Label').fill('door sensor')
    await page.getByRole('button', { name: 'Create the key' }).click()
    const alert = page.getByRole('alert').filter({ hasText: 'Confirm your address first' })
    await alert.getByText(`follow the link mailed to ${person.email}`).waitFor()
    // in words: no endpoint, no error code
    assert.doesNotMatch((await alert.textContent()) ?? '', /POST|\/v1\/|emailNotVerified/)
    await expectNoAxeViolations(page, 'an address to confirm first, on the keys screen')

    await alert.getByRole('button', { name: 'Send the link again' }).click()
    await alert.getByText(`A new link was mailed to ${person.email}.`).waitFor()
    const mail = await smtp.next()
    assert.equal(mail.subject, 'Confirm your e-mail address')
    assert.equal((mail.to as { text: string }).text, person.email)

    // the same words on the New status form (a status needs a confirmed address too)
    await page.goto(`${server.origin}/statuses/new`)
    await expectScreen(page, 'New status')
    await page.getByLabel('Name').fill('Meeting room 4')
    await page.getByRole('button', { name: 'Create status' }).click()
    await page
      .getByRole('alert')
      .getByText(`Confirm your address first: follow the link mailed to ${person.email}`)
      .waitFor()
  })
})

describe('keys, account, notifications and a status’s notifications tab pass axe', {
  skip: chromiumMissing(),
  // four browsers in turn, each a minute or more on a busy 2-core host
  timeout: 600_000,
}, () => {
  for (const colorScheme of ['light', 'dark'] as const)
    for (const width of [375, 1280])
      it(`${colorScheme}, ${width} px`, async (ctx) => {
        const server = await appServer(ctx, { webhookAllowNetworks: ['127.0.0.0/8'] })
        const person = await signUpPerson(server, { name: 'Grace' })
        await anotherSession(server, person)
        const door = await asSession(server.t, person.cookie, 'POST', '/v1/status-keys/door', {
          name: 'Front door',
          palette: [{ value: 'OPEN', colorNo: 3 }],
        })
        await asSession(server.t, person.cookie, 'POST', '/v1/user/api-keys', {
          label: 'door sensor',
          scopes: ['status:value'],
        })
        const receiver = await startReceiver(ctx)
        await asSession(server.t, person.cookie, 'POST', '/v1/user/channels', {
          type: 'webhook',
          name: 'Ops',
          config: { url: `${receiver.origin}/hook`, format: 'standard' },
        })
        const viewport = { width, height: 800 }
        const { page } = await openApp(ctx, server, {
          person,
          path: '/keys',
          viewport,
          colorScheme,
        })
        const label = (screen: string) => `${screen}, ${colorScheme}, ${width} px`

        await expectScreen(page, 'API keys')
        await page.getByText('Create a key').click()
        await page.getByRole('radio', { name: /Only these/ }).check()
        await page.getByRole('checkbox', { name: 'Front door' }).check()
        await page.getByRole('button', { name: 'Create the key' }).click()
        await page.locator('.secret-once').waitFor()
        await expectNoAxeViolations(page, label('keys with a new secret'))
        await page.getByRole('button', { name: 'Revoke all keys' }).click()
        await expectNoAxeViolations(page, label('keys, revoke-all dialog'))
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click()

        await page.getByRole('link', { name: 'Account' }).click()
        await expectScreen(page, 'Account')
        await page.getByText('This browser').waitFor()
        await expectNoAxeViolations(page, label('account'))

        await page.getByRole('link', { name: 'Notifications' }).click()
        await expectScreen(page, 'Notifications')
        await page.getByRole('button', { name: 'Delivery log of Ops' }).click()
        await page.getByText('No deliveries yet.').waitFor()
        await expectNoAxeViolations(page, label('notifications'))
        assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'))

        await page.goto(`${server.origin}/statuses/${door.json().id}/notifications`)
        await page.getByRole('button', { name: 'Save', exact: true }).waitFor()
        await page
          .getByRole('radio', { name: 'When it changes to or leaves chosen values' })
          .check()
        await page.getByRole('radio', { name: 'Only these' }).check()
        await expectNoAxeViolations(page, label('a status’s notifications tab'))
        assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'))
      })
})
