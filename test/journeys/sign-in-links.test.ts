import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { chromiumMissing } from '../helpers/browser.ts'
import { JOURNEY_TIMEOUT, type Journey, journeyBrowser, startJourney } from '../helpers/journey.ts'

// The ways back in without a password at hand (docs/accounts.md#e-mail): the operator's
// `statusd user link <email>`, printed in a terminal and handed over; and a password reset
// asked for on the sign-in screen ("Forgot your password?"), through the link the real SMTP
// server receives. Each link opens a page with one button;
// pressing it leaves the person in the app, signed in.

const chromium = journeyBrowser()

const FIRST_PASSWORD = 'violet harbour lantern ferns'
const NEW_PASSWORD = 'copper kettle under moss'

/** The header's link to a place of the app. */
const place = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name })

/** Signs in on the sign-in screen (signed out, the app first hears 401 from /v1/user). */
async function signIn(j: Journey, page: Page, email: string, password: string): Promise<void> {
  j.expectResponse(401, '/v1/user')
  await page.goto(`${j.url}/sign-in`)
  await page.getByLabel('E-mail').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await place(page, 'Board').waitFor()
}

describe('sign-in links', { skip: chromiumMissing(), timeout: JOURNEY_TIMEOUT }, () => {
  it('statusd user link <email>: the printed link opens a page whose button signs the person in', async (t) => {
    // set up as an operator does: reached by a name, PUBLIC_URL saying which
    const j = await startJourney(t, chromium(), { localhost: true })
    assert.match(j.url, /^http:\/\/localhost:\d+$/)
    // the operator, in a terminal next to the server
    await j.cli('user', 'add', '--name', 'Bea Operator', '--email', 'bea@example.com')
    const { stdout } = await j.cli('user', 'link', 'bea@example.com')
    const link = /(https?:\/\/\S+\/auth\/link\/\S+)/.exec(stdout)?.[1]
    assert.ok(link, `statusd user link prints the link:\n${stdout}`)
    assert.ok(link.startsWith(`${j.url}/auth/link/`), 'the link points at the running server')

    // Bea, on her phone
    const page = await j.open('phone')
    await page.goto(link)
    await page.getByRole('heading', { name: 'Sign in to statusd' }).waitFor()
    await j.check(page, 'the printed sign-in link')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${j.url}/`)
    await j.check(page, "Bea's board")
    // signed in as herself
    await place(page, 'Account').click()
    const name = page.getByRole('region', { name: 'Profile' }).getByLabel('Name')
    assert.equal(await name.inputValue(), 'Bea Operator')
  })

  it('a password reset through the mailed link: a new password, signed in, other browsers out', async (t) => {
    const j = await startJourney(t, chromium(), { smtp: true })
    // first, as README's first five minutes: the account set up through the first start's
    // link, with an e-mail address and a password
    const laptop = await j.open('desktop')
    await j.setUp(laptop, { name: 'Robin', email: 'me@example.com', password: FIRST_PASSWORD })

    // the password forgotten, on another phone, signed out: "Forgot your password?" on the
    // sign-in screen asks for the link (POST /v1/auth/password-reset)
    const lost = await j.open('phone')
    j.expectResponse(401, '/v1/user')
    await lost.goto(`${j.url}/sign-in`)
    await lost.getByLabel('E-mail').fill('me@example.com')
    await lost.getByRole('button', { name: 'Forgot your password?' }).click()
    const forgot = lost.getByRole('region', { name: 'Forgot your password?' })
    assert.equal(await forgot.getByLabel('Your e-mail address').inputValue(), 'me@example.com')
    await forgot.getByRole('button', { name: 'Mail me a link' }).click()
    await forgot.getByText('If an account has this address, a link is on its way').waitFor()
    await j.check(lost, 'the reset link asked for on the sign-in screen')
    const resetMail = await j.mail()
    const link = j.linkIn(resetMail, '/auth/reset/')
    assert.equal(resetMail.subject, 'Reset your password')
    await lost.goto(link)
    await lost.getByRole('heading', { name: 'Choose a new password' }).waitFor()
    await j.check(lost, 'the e-mailed reset link')
    await lost.getByLabel('New password').fill(NEW_PASSWORD)
    await lost.getByRole('button', { name: 'Set the new password' }).click()
    await lost.waitForURL(`${j.url}/`)
    await place(lost, 'Board').waitFor()
    await j.check(lost, 'the board after the reset')

    // the laptop was signed out by the reset; the new password signs in there
    j.expectResponse(401, '/v1/user')
    await laptop.reload()
    await laptop.getByRole('heading', { name: 'Sign in' }).waitFor()
    await signIn(j, laptop, 'me@example.com', NEW_PASSWORD)
    await j.check(laptop, 'signed in with the new password')
  })
})
