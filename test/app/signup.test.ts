import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { asSession, GOOD_PASSWORD } from '../helpers/accounts.ts'
import {
  type AppServer,
  appServer,
  expectScreen,
  openApp,
  type Person,
  signUpPerson,
} from '../helpers/app-browser.ts'
import { expectTileValue, makeStatus } from '../helpers/app-statuses.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing, launchChromium } from '../helpers/browser.ts'
import { openPasskeyPage } from '../helpers/webauthn.ts'

// Signing up and in (docs/app.md#signing-up): the sign-up screen with the API's rules and
// messages, signing up through an invitation link's page, accepting one signed in, the
// invitations waiting for me, and signing in with a passkey, in real Chromium.

async function invitationLink(
  server: AppServer,
  owner: Person,
  statusId: string,
  body: Record<string, unknown> = { role: 'subscriber' },
): Promise<string> {
  const res = await asSession(
    server.t,
    owner.cookie,
    'POST',
    `/v1/status/${statusId}/invitations`,
    body,
  )
  assert.equal(res.statusCode, 201, res.body)
  return res.json().url
}

const subscriptionsOf = async (server: AppServer, cookie: string) =>
  (await asSession(server.t, cookie, 'GET', '/v1/user/subscriptions')).json() as {
    name: string
    role: string
  }[]

describe('signing up and in', { skip: chromiumMissing(), timeout: 600_000 }, () => {
  it('signs up through an invitation link: its page leads to sign-up, the role comes with the account', async (ctx) => {
    // SIGNUP=invite: the invitation is the only way in
    const server = await appServer(ctx, { signup: 'invite' })
    const owner = await server.t.user({ name: 'Olivia' })
    const made = await server.t.request(owner, 'POST', '/v1/status-keys/room', {
      name: 'Room 4',
      value: 'FREE',
    })
    assert.equal(made.statusCode, 201, made.body)
    const link = await server.t.request(owner, 'POST', `/v1/status/${made.json().id}/invitations`, {
      role: 'subscriber',
    })
    assert.equal(link.statusCode, 201, link.body)
    const { url } = link.json()

    const { page } = await openApp(ctx, server, { path: new URL(url).pathname })
    await page.getByRole('heading', { name: 'Room 4' }).waitFor()
    await page.getByRole('link', { name: 'Sign up and accept' }).click()
    await expectScreen(page, 'Create an account')
    await page.getByText('Olivia invites you to follow Room 4 as a subscriber').waitFor()
    await page.getByLabel('Name').fill('Sam')
    await page.getByLabel('E-mail').fill('sam@example.com')
    await page.getByLabel('Password').fill(GOOD_PASSWORD)
    await page.getByRole('button', { name: 'Sign up and accept' }).click()
    await expectScreen(page, 'Board')
    assert.equal(new URL(page.url()).pathname, '/')
    await expectTileValue(page, 'Room 4', 'FREE')
    const cookie = (await page.context().cookies()).find((c) => c.name === 'statusd_session')
    assert.ok(cookie)
    assert.deepEqual(
      (await subscriptionsOf(server, cookie.value)).map((s) => [s.name, s.role]),
      [['Room 4', 'subscriber']],
    )
  })

  it('without an invitation, SIGNUP=invite says sign-up is by invitation before any form; SIGNUP=open signs up with the API’s rules', async (ctx) => {
    const closed = await appServer(ctx, { signup: 'invite' })
    const a = await openApp(ctx, closed, {
      path: '/sign-up',
      viewport: { width: 390, height: 844 },
    })
    await expectScreen(a.page, 'Sign-up is by invitation')
    await a.page.getByText('Ask someone who uses it to invite you').waitFor()
    assert.equal(await a.page.getByLabel('Password').count(), 0, 'no form to fill in vain')
    assert.equal(await a.page.getByRole('button', { name: 'Create account' }).count(), 0)
    await expectNoAxeViolations(a.page, 'sign-up by invitation only, phone')
    await a.page.getByRole('link', { name: 'Sign in' }).click()
    await expectScreen(a.page, 'Sign in')

    const open = await appServer(ctx)
    const b = await openApp(ctx, open, { path: '/sign-up', allowConsoleErrors: true })
    await expectScreen(b.page, 'Create an account')
    await b.page.getByLabel('Name').fill('Sam')
    await b.page.getByLabel('E-mail').fill('sam@example.com')
    // long enough for the browser, in the common-password list for the API
    await b.page.getByLabel('Password').fill('1qaz2wsx3edc')
    await b.page.getByRole('button', { name: 'Create account' }).click()
    await b.page.locator('.field-error').waitFor()
    assert.match((await b.page.locator('.field-error').textContent()) ?? '', /common/i)
    await b.page.getByLabel('Password').fill(GOOD_PASSWORD)
    await b.page.getByRole('button', { name: 'Create account' }).click()
    await expectScreen(b.page, 'Board')
  })

  it('signed in already, an invitation link is accepted with one button', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const sam = await signUpPerson(server, { name: 'Sam' })
    const status = await makeStatus(server, owner, 'room', { name: 'Room 5', value: 'FREE' })
    const url = await invitationLink(server, owner, status.id, { role: 'updater' })
    const token = new URL(url).pathname.split('/').pop() as string
    const { page } = await openApp(ctx, server, {
      person: sam,
      path: `/sign-up?invitation=${token}`,
    })
    await expectScreen(page, 'Accept the invitation')
    await page.getByText('as an updater').waitFor()
    await page.getByRole('button', { name: 'Accept' }).click()
    await expectScreen(page, 'Board')
    assert.deepEqual(
      (await subscriptionsOf(server, sam.cookie)).map((s) => [s.name, s.role]),
      [['Room 5', 'updater']],
    )
  })

  it('a revoked or forged invitation says so on sign-up', async (ctx) => {
    const server = await appServer(ctx)
    const { page } = await openApp(ctx, server, {
      path: `/sign-up?invitation=sdi_${'Q'.repeat(43)}`,
      allowConsoleErrors: true,
    })
    await page.getByRole('alert').filter({ hasText: 'not valid' }).waitFor()
  })

  it('declining an invitation waiting for me removes it and gives no role', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: '<b>Olivia</b>' })
    const sam = await signUpPerson(server, { name: 'Sam' })
    const status = await makeStatus(server, owner, 'room', { name: 'Room 6', value: 'FREE' })
    const offered = await asSession(
      server.t,
      owner.cookie,
      'PUT',
      `/v1/status/${status.id}/users/${sam.id}`,
      { role: 'subscriber' },
    )
    assert.equal(offered.statusCode, 202)
    const { page } = await openApp(ctx, server, { person: sam })
    await page.getByText('<b>Olivia</b> invites you to Room 6 as a subscriber.').waitFor()
    await page.getByRole('button', { name: 'Decline the invitation to Room 6' }).click()
    await page.getByText('You declined the invitation to Room 6.').waitFor({ state: 'attached' })
    assert.equal(await page.getByRole('heading', { name: 'Invitations for you' }).count(), 0)
    assert.deepEqual(await subscriptionsOf(server, sam.cookie), [])
  })

  it('signs in with a passkey alone (the browser’s virtual authenticator)', async (ctx) => {
    const server = await appServer(ctx)
    const browser = await launchChromium()
    ctx.after(() => browser.close())
    const p = await openPasskeyPage(browser.context, server.origin, '/sign-in')
    const account = { email: 'ada@example.com', name: 'Ada', password: GOOD_PASSWORD }
    assert.equal((await p.call('POST', '/v1/auth/signup', account)).status, 201)
    const registered = await p.register({ name: 'Laptop' })
    assert.equal(registered.status, 201, JSON.stringify(registered))
    assert.equal((await p.call('POST', '/v1/auth/logout')).status, 204)
    await p.page.reload()
    await expectScreen(p.page, 'Sign in')
    await p.page.bringToFront()
    await p.page.getByRole('button', { name: 'Use a passkey' }).click()
    await expectScreen(p.page, 'Board')
    assert.equal((await p.call('GET', '/v1/user')).body.email, 'ada@example.com')
  })

  for (const colorScheme of ['light', 'dark'] as const)
    for (const width of [375, 1280])
      it(`sign-up, with an invitation and without, passes axe (${colorScheme}, ${width} px)`, async (ctx) => {
        const server = await appServer(ctx)
        const owner = await signUpPerson(server, { name: 'Olivia' })
        const status = await makeStatus(server, owner, 'room', { name: 'Room', value: 'FREE' })
        const url = await invitationLink(server, owner, status.id)
        const viewport = { width, height: 800 }
        const { page } = await openApp(ctx, server, {
          path: '/sign-up',
          viewport,
          colorScheme,
          allowConsoleErrors: true,
        })
        await expectScreen(page, 'Create an account')
        await expectNoAxeViolations(page, `sign-up, ${colorScheme}, ${width} px`)
        await page.goto(
          `${server.origin}/sign-up?invitation=${new URL(url).pathname.split('/').pop()}`,
        )
        await page.getByText('invites you').waitFor()
        await page.getByRole('button', { name: 'Sign up and accept' }).click() // empty: the browser says what is missing
        await expectNoAxeViolations(page, `sign-up with an invitation, ${colorScheme}, ${width} px`)
        await page.goto(`${server.origin}/sign-in`)
        await page.getByRole('button', { name: 'Use a passkey' }).waitFor()
        await expectNoAxeViolations(
          page,
          `sign-in with the passkey button, ${colorScheme}, ${width} px`,
        )
        await page.goto(url)
        await page.getByRole('link', { name: 'Sign up and accept' }).waitFor()
        await expectNoAxeViolations(page, `invitation page, ${colorScheme}, ${width} px`)
      })
})
