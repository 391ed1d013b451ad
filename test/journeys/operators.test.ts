import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { chromiumMissing } from '../helpers/browser.ts'
import {
  JOURNEY_TIMEOUT,
  type Journey,
  journeyBrowser,
  SIZES,
  type Size,
  startJourney,
} from '../helpers/journey.ts'
import {
  confirmDialog,
  fitsTheScreen,
  goTo,
  newStatus,
  onScreen,
  plansWithoutRateLimit,
} from '../helpers/journey-people.ts'

// The operators' screens (docs/app.md#operators), as the first operator uses them: in by the
// link the first start printed, Admin in the navigation, a user found by search, put on
// another plan, disabled (their open page is signed out, their key refused) and enabled
// again, handed a sign-in link; the instance at a glance. The user, back in by that link, is
// no operator: no Admin in their navigation, and Not allowed at /admin.

const chromium = journeyBrowser()

/** The header's link to a place of the app. */
const place = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true })

/** The answer of GET /v1/checkAuth with an API key: its status. */
const keyWorks = async (j: Journey, key: string): Promise<number> => {
  const response = await fetch(`${j.url}/v1/checkAuth`, { headers: { 'service-api-key': key } })
  await response.arrayBuffer()
  return response.status
}

/** A one-time link the CLI printed. */
const printedLink = (stdout: string): string => {
  const link = /(https?:\/\/\S+\/auth\/link\/\S+)/.exec(stdout)?.[1]
  assert.ok(link, `a sign-in link in:\n${stdout}`)
  return link
}

for (const size of Object.keys(SIZES) as Size[]) {
  describe(`operators (${size})`, { skip: chromiumMissing(), timeout: JOURNEY_TIMEOUT }, () => {
    it('the first operator finds a user, changes their plan, disables and enables them, hands them a sign-in link', async (t) => {
      const j = await startJourney(t, chromium(), {
        env: { PLANS_FILE: plansWithoutRateLimit(t) },
      })
      // people made in a terminal next to the server: Bo, whom the operator will look after,
      // and two more the search must leave out
      await j.cli('user', 'add', '--name', 'Bo Tanaka', '--email', 'bo@example.com')
      await j.cli('user', 'add', '--name', 'Cy Okafor', '--email', 'cy@example.org')
      await j.cli('user', 'add', '--name', 'Dee Brandt', '--email', 'dee@example.org')
      const { stdout } = await j.cli('key', 'create', '--user', 'bo@example.com', '--json')
      const boKey = (JSON.parse(stdout) as { key: string }).key
      assert.equal(await keyWorks(j, boKey), 200, "Bo's key works")

      // Bo, on a phone, with one of her statuses open: its live stream open
      const bo = await j.open('phone')
      await bo.goto(printedLink((await j.cli('user', 'link', 'bo@example.com')).stdout))
      await bo.getByRole('button', { name: 'Sign in' }).click()
      await onScreen(bo, 'Board')
      assert.equal(await place(bo, 'Admin').count(), 0, 'no Admin for someone not an operator')
      await newStatus(bo, { name: 'Kettle', value: 'ON' })

      // the operator, set up through the first start's link: Admin is in the navigation
      const op = await j.open(size)
      await j.setUp(op, {
        name: 'Ops',
        email: 'ops@example.com',
        password: 'correct horse battery staple 7',
      })
      await onScreen(op, 'Board')
      await place(op, 'Admin').click()
      await onScreen(op, 'Users')
      const admin = op.getByRole('navigation', { name: 'Admin' })
      assert.equal(
        await admin.getByRole('link', { name: 'Users' }).getAttribute('aria-current'),
        'page',
      )
      await op.locator('.admin-users .item').nth(3).waitFor()
      await j.check(op, `every user (${size})`)

      // found by a part of her address; the others left out
      await op.getByLabel('Find a user').fill('bo@')
      await op.getByRole('button', { name: 'Search', exact: true }).click()
      await op.getByRole('heading', { name: 'Users matching “bo@”' }).waitFor()
      await op.waitForURL(`${j.url}/admin?q=bo%40`)
      const users = op.locator('.admin-users > li')
      await users.filter({ hasText: 'bo@example.com' }).waitFor()
      assert.equal(await users.count(), 1, 'only Bo matches')
      const boItem = users.filter({ hasText: 'Bo Tanaka' })
      await boItem.getByText('Manage').click()
      await j.check(op, `Bo found and her actions open (${size})`)
      if (size === 'phone') assert.ok(await fitsTheScreen(op), 'nothing wider than the phone')

      // another plan
      await boItem.getByLabel('Plan', { exact: true }).fill('pro')
      await boItem.getByRole('button', { name: 'Change plan' }).click()
      await op.getByText('Bo Tanaka is on the plan pro now.').waitFor()
      await boItem.locator('dd', { hasText: /^pro$/ }).waitFor()

      // disabled: her open page is signed out at once, her key refused
      j.expectResponse(401, '/v1/events')
      j.expectResponse(401, '/v1/user')
      await boItem.getByRole('button', { name: 'Disable Bo Tanaka' }).click()
      await j.check(op, `the dialog before disabling (${size})`)
      await confirmDialog(op, 'Disable the account')
      await op.getByText('Bo Tanaka is disabled').waitFor()
      await boItem.getByText('disabled', { exact: true }).waitFor()
      await onScreen(bo, 'Sign in')
      assert.equal(await keyWorks(j, boKey), 401, "a disabled user's key is refused")

      // enabled again: the same key works
      await boItem.getByRole('button', { name: 'Enable' }).click()
      await op.getByText('Bo Tanaka is enabled').waitFor()
      assert.equal(await keyWorks(j, boKey), 200, "an enabled user's key works again")

      // a sign-in link for her, to hand over
      await boItem.getByRole('button', { name: 'Make a sign-in link' }).click()
      const field = boItem.getByLabel('Sign-in link')
      await field.waitFor()
      const link = await field.inputValue()
      assert.ok(link.startsWith(`${j.url}/auth/link/`), `a link to this server: ${link}`)
      await j.check(op, `a sign-in link made (${size})`)

      // someone invited: without e-mail set up, their link is shown to hand over
      const invite = op.getByRole('group').filter({ hasText: 'Invite someone' })
      await invite.getByText('Invite someone').click()
      await invite.getByLabel('E-mail address').fill('eve@example.org')
      await invite.getByLabel('Name (optional)').fill('Eve Marsh')
      await invite.getByRole('button', { name: 'Invite', exact: true }).click()
      await op.getByText('Eve Marsh was invited: hand them the link below.').waitFor()
      const invitation = await invite.getByLabel('Invitation link').inputValue()
      assert.ok(invitation.startsWith(`${j.url}/auth/link/`), `an invitation link: ${invitation}`)
      await j.check(op, `someone invited (${size})`)

      // an operator's key may hold the scope admin: the keys screen offers it
      await goTo(op, 'API keys')
      await op.getByText('Create a key').click()
      await op.getByRole('checkbox', { name: /^admin:/ }).waitFor()
      await goTo(op, 'Admin', 'Users')

      // the instance
      await admin.getByRole('link', { name: 'Instance' }).click()
      await onScreen(op, 'Instance')
      await op.getByText('SQLite').waitFor()
      await op.getByText(/^statusd \d+\.\d+\.\d+/).waitFor()
      await j.check(op, `the instance (${size})`)
      if (size === 'phone') assert.ok(await fitsTheScreen(op), 'nothing wider than the phone')

      // Bo, in by the link, on a browser of this size: no Admin, and /admin is not hers
      const boAgain = await j.open(size)
      await boAgain.goto(link)
      await boAgain.getByRole('button', { name: 'Sign in' }).click()
      await onScreen(boAgain, 'Board')
      assert.equal(await place(boAgain, 'Admin').count(), 0, 'no Admin link for Bo')
      await goTo(boAgain, 'Account')
      const profile = boAgain.getByRole('region', { name: 'Profile' })
      assert.equal(await profile.getByLabel('Name').inputValue(), 'Bo Tanaka')
      // her new keys cannot hold the scope admin: the keys screen does not offer it
      await goTo(boAgain, 'API keys')
      await boAgain.getByText('Create a key').click()
      await boAgain.getByRole('checkbox', { name: /^account:/ }).waitFor()
      assert.equal(await boAgain.getByRole('checkbox', { name: /^admin:/ }).count(), 0)
      await boAgain.goto(`${j.url}/admin`)
      await onScreen(boAgain, 'Not allowed')
      await j.check(boAgain, `not allowed at /admin (${size})`)
      await boAgain.goto(`${j.url}/admin/instance`)
      await onScreen(boAgain, 'Not allowed')
    })
  })
}
