import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { asSession, GOOD_PASSWORD } from '../helpers/accounts.ts'
import {
  type AppServer,
  appServer,
  expectScreen,
  openApp,
  type Person,
  signUpPerson,
} from '../helpers/app-browser.ts'
import { makeStatus } from '../helpers/app-statuses.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'

// The page an invitation link opens (docs/accounts.md#invitation-links), as the person who
// got the link meets it, in real Chromium on a phone: until when it is open (a date, never
// "just now"), nothing wider than the screen and no API addresses, and someone signed in
// answers it on the page.

const PHONE = { width: 390, height: 844 }

/** A 7-day link (the default) to Room 4 as an updater, made by Olivia: its URL and expiry. */
async function sevenDayLink(server: AppServer, owner: Person) {
  const status = await makeStatus(server, owner, 'room-4', { name: 'Room 4', value: 'FREE' })
  const res = await asSession(
    server.t,
    owner.cookie,
    'POST',
    `/v1/status/${status.id}/invitations`,
    {
      role: 'updater',
    },
  )
  assert.equal(res.statusCode, 201, res.body)
  const { url, expiresAt } = res.json() as { url: string; expiresAt: string }
  return { path: new URL(url).pathname, expiresAt, statusId: status.id }
}

const rolesOf = async (server: AppServer, person: Person) =>
  (
    (await asSession(server.t, person.cookie, 'GET', '/v1/user/subscriptions')).json() as {
      name: string
      role: string
    }[]
  ).map((s) => [s.name, s.role])

/** Nothing on the page is wider than the phone: no sideways scrolling. */
async function assertFitsWidth(page: Page, width: number) {
  const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'))
  assert.ok(scrollWidth <= width, `the page is ${scrollWidth} px wide on a ${width} px screen`)
}

describe('the invitation page', { skip: chromiumMissing(), timeout: 300_000 }, () => {
  it('says until when a 7-day link is open, fits a phone, shows no API address; signing in from it leads back to Accept', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const sam = await signUpPerson(server, { name: 'Sam' })
    const link = await sevenDayLink(server, owner)

    const { page } = await openApp(ctx, server, { path: link.path, viewport: PHONE })
    await page.getByRole('heading', { name: 'Room 4' }).waitFor()
    const until = page.locator('time')
    // the script has put the date in the reader's own form (en-GB, UTC in these browsers)
    await page.waitForFunction("!document.querySelector('time').textContent.includes('UTC')")
    const text = (await until.textContent()) ?? ''
    assert.doesNotMatch(text, /just now|ago/, `"open until ${text}"`)
    const expires = new Date(link.expiresAt)
    assert.ok(
      text.includes(String(expires.getUTCFullYear())),
      `"open until ${text}" names the year`,
    )
    assert.match(
      text,
      new RegExp(`\\b${expires.getUTCDate()}\\b`),
      `"open until ${text}" names the day`,
    )
    await assertFitsWidth(page, PHONE.width)
    const words = (await page.locator('body').textContent()) ?? ''
    assert.doesNotMatch(words, /\/v1\/|POST /, 'no API address for a person')
    await expectNoAxeViolations(page, 'invitation page, signed out, phone')

    // Sam has an account: signing in brings Sam back to the invitation, to accept it there
    await page.getByRole('link', { name: 'Sign in to accept' }).click()
    await expectScreen(page, 'Sign in')
    await page.getByLabel('E-mail').fill(sam.email)
    await page.getByLabel('Password').fill(GOOD_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('You are signed in as Sam').waitFor()
    assert.equal(new URL(page.url()).pathname, link.path)
    await page.getByRole('button', { name: 'Accept' }).click()
    await page.waitForURL((url) => url.pathname === `/statuses/${link.statusId}`)
    await page.getByRole('heading', { name: 'Room 4' }).waitFor()
    assert.deepEqual(await rolesOf(server, sam), [['Room 4', 'updater']])
  })

  it('signed in, the page asks no one to sign in: Accept and Decline are on it (Decline gives no role)', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const sam = await signUpPerson(server, { name: 'Sam' })
    const link = await sevenDayLink(server, owner)

    const { page } = await openApp(ctx, server, { person: sam, path: link.path, viewport: PHONE })
    await page.getByText('You are signed in as Sam').waitFor()
    assert.equal(await page.getByRole('link', { name: /sign in/i }).count(), 0)
    await page.getByRole('button', { name: 'Accept' }).waitFor()
    await assertFitsWidth(page, PHONE.width)
    await expectNoAxeViolations(page, 'invitation page, signed in, phone')
    await page.getByRole('link', { name: 'Decline' }).click()
    await expectScreen(page, 'Board')
    assert.deepEqual(await rolesOf(server, sam), [])

    // the link still works for Sam later
    await page.goto(server.origin + link.path)
    await page.getByRole('button', { name: 'Accept' }).click()
    await page.waitForURL((url) => url.pathname === `/statuses/${link.statusId}`)
    assert.deepEqual(await rolesOf(server, sam), [['Room 4', 'updater']])
  })
})
