import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createMailer } from '../../src/lib/mailer.ts'
import { asSession, sessionCookieOf } from '../helpers/accounts.ts'
import {
  type AppServer,
  appServer,
  expectScreen,
  openApp,
  type Person,
  signUpPerson,
} from '../helpers/app-browser.ts'
import { giveRole, makeStatus } from '../helpers/app-statuses.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import { linkIn, startSmtpServer } from '../helpers/smtp.ts'

// The people tab (docs/app.md#people-and-invitations): who has which role, inviting by link
// or by e-mail (through a real SMTP server), changing a role (an invitation to accept) and
// removing someone, in real Chromium.

const usersOf = async (server: AppServer, owner: Person, statusId: string) =>
  (await asSession(server.t, owner.cookie, 'GET', `/v1/status/${statusId}/users`)).json() as {
    userId: string
    role: string
  }[]

describe('the people tab', { skip: chromiumMissing(), timeout: 600_000 }, () => {
  it('an invitation link made here is shown once, copies, is listed open, and revokes', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const status = await makeStatus(server, owner, 'room', { name: 'Room', value: 'FREE' })
    const { page, context } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/people`,
    })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: server.origin,
    })
    await expectScreen(page, 'Room')
    await page.locator('.person-name', { hasText: 'Olivia' }).waitFor()
    await page.getByLabel('Role', { exact: true }).selectOption('updater')
    await page.getByLabel('Uses').fill('3')
    await page.getByRole('button', { name: 'Make invitation' }).click()
    const field = page.getByRole('textbox', { name: 'Invitation link' })
    await field.waitFor()
    const url = await field.inputValue()
    assert.match(url, new RegExp(`^${server.origin}/invite/sdi_`))
    await page.getByRole('button', { name: 'Copy invitation link' }).click()
    await page.getByText('Copied', { exact: true }).waitFor()
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), url)
    await page.getByText('Updater link: 3 of 3 uses left', { exact: false }).waitFor()
    // the link works: its page says what it offers
    const preview = await server.t.request(null, 'GET', new URL(url).pathname)
    assert.equal(preview.statusCode, 200)

    await page.getByRole('button', { name: /^Revoke the updater link/ }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click()
    await page.getByText('No invitation is waiting.').waitFor()
    const links = (
      await asSession(server.t, owner.cookie, 'GET', `/v1/status/${status.id}/invitations`)
    ).json()
    assert.equal(links[0].state, 'revoked')
    assert.equal((await server.t.request(null, 'GET', new URL(url).pathname)).statusCode, 410)
  })

  it('an invitation by e-mail is mailed through the SMTP server, bound to that address', async (ctx) => {
    const smtp = await startSmtpServer(ctx)
    const server = await appServer(ctx, {
      mailer: createMailer(smtp.url, 'statusd <statusd@example.com>'),
    })
    const owner = await signUpPerson(server, { name: 'Olivia' })
    // with mail, an account is verified through the link mailed to it
    const verify = linkIn(await smtp.next(), `${server.origin}/auth/verify/`)
    const verified = await server.t.request(null, 'POST', '/v1/auth/verify-email', {
      token: verify.split('/').pop(),
    })
    assert.equal(verified.statusCode, 200, verified.body)
    // the first proof of the address ended the sign-up's session: the link's is the one
    // (docs/accounts.md#e-mail)
    owner.cookie = sessionCookieOf(verified)?.value as string
    const status = await makeStatus(server, owner, 'room', { name: 'Room 7', value: 'FREE' })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/people`,
    })
    await expectScreen(page, 'Room 7')
    await page.getByLabel('E-mail (optional)').fill('Sam@Example.com')
    await page.getByRole('button', { name: 'Make invitation' }).click()
    await page.locator('.once', { hasText: 'Mailed to sam@example.com' }).waitFor()
    const url = await page.getByRole('textbox', { name: 'Invitation link' }).inputValue()
    const mail = await smtp.next()
    assert.deepEqual(
      mail.to && !Array.isArray(mail.to) ? mail.to.value.map((a) => a.address?.toLowerCase()) : [],
      ['sam@example.com'],
    )
    assert.equal(linkIn(mail, `${server.origin}/invite/`), url)
    await page.getByText('Subscriber link for sam@example.com').waitFor()
  })

  it('an address that is no address: the API’s message at the field, nothing made', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    const status = await makeStatus(server, owner, 'room', { name: 'Room', value: 'FREE' })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/people`,
      allowConsoleErrors: true,
    })
    await expectScreen(page, 'Room')
    // the browser takes it for an address; the API does not
    await page.getByLabel('E-mail (optional)').fill('sam@example')
    await page.getByRole('button', { name: 'Make invitation' }).click()
    await page.locator('.field-error').first().waitFor()
    assert.match(
      (await page.locator('.field-error').first().textContent()) ?? '',
      /e-mail|address|format/i,
    )
    const links = (
      await asSession(server.t, owner.cookie, 'GET', `/v1/status/${status.id}/invitations`)
    ).json()
    assert.deepEqual(links, [])
  })

  it('raising a role is an invitation the person accepts; lowering is at once; removing asks first', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const sam = await signUpPerson(server, { name: 'Sam' })
    const status = await makeStatus(server, owner, 'room', { name: 'Room', value: 'FREE' })
    await giveRole(server, owner, status.id, sam, 'subscriber')
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/people`,
    })
    await expectScreen(page, 'Room')
    const role = page.getByLabel('Role of Sam')
    assert.equal(await role.inputValue(), 'subscriber')
    await role.selectOption('updater')
    await page.getByText(/Sam is invited to be an updater/).waitFor({ state: 'attached' })
    await page.getByText(/Updater role offered to a user/).waitFor()
    assert.equal((await usersOf(server, owner, status.id))[1]?.role, 'subscriber', 'not yet')

    // Sam sees it waiting above the board and accepts it there
    const samBrowser = await openApp(ctx, server, { person: sam })
    await samBrowser.page.getByRole('heading', { name: 'Invitations for you' }).waitFor()
    await samBrowser.page.getByRole('button', { name: 'Accept the invitation to Room' }).click()
    await samBrowser.page.getByText('You accepted the invitation to Room.').waitFor({
      state: 'attached',
    })
    assert.equal((await usersOf(server, owner, status.id))[1]?.role, 'updater')

    await page.reload()
    await expectScreen(page, 'Room')
    assert.equal(await page.getByLabel('Role of Sam').inputValue(), 'updater')
    await page.getByLabel('Role of Sam').selectOption('subscriber')
    await page.getByText('Sam is now a subscriber.').waitFor({ state: 'attached' })
    assert.equal((await usersOf(server, owner, status.id))[1]?.role, 'subscriber')

    await page.getByRole('button', { name: 'Remove Sam' }).click()
    const dialog = page.getByRole('dialog', { name: 'Remove Sam?' })
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    assert.equal((await usersOf(server, owner, status.id)).length, 2, 'cancel removes nobody')
    await page.getByRole('button', { name: 'Remove Sam' }).click()
    await dialog.getByRole('button', { name: 'Remove' }).click()
    await page.getByText('Sam no longer has a role on this status.').waitFor({ state: 'attached' })
    assert.deepEqual(
      (await usersOf(server, owner, status.id)).map((u) => u.role),
      ['owner'],
    )
  })

  it('a hostile user name is text; an updater is told the owner keeps the list to themselves', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const hostile = '<img src=x onerror=alert(1)>\u202eאמה\u200b'
    const uma = await signUpPerson(server, { name: hostile })
    const status = await makeStatus(server, owner, 'room', { name: 'Room', value: 'FREE' })
    await giveRole(server, owner, status.id, uma, 'updater')
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/people`,
      viewport: { width: 375, height: 800 },
    })
    const dialogs: string[] = []
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      d.dismiss()
    })
    await expectScreen(page, 'Room')
    await page.getByText(hostile, { exact: true }).waitFor()
    assert.equal(await page.locator('main img[src="x"]').count(), 0)
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'))
    assert.deepEqual(dialogs, [])

    const asUma = await openApp(ctx, server, {
      person: uma,
      path: `/statuses/${status.id}/people`,
      allowConsoleErrors: true,
    })
    await asUma.page.getByText('The owner keeps the list of people').waitFor()
    assert.equal(await asUma.page.getByRole('button', { name: 'Make invitation' }).count(), 0)
  })
})
