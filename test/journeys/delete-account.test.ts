// Leaving (docs/accounts.md#delete-your-account, docs/app.md#deleting-your-account), as a
// person does it at phone and desktop sizes: Ada signed up and made "Front desk", which
// Olivia follows. Under Account she opens "Delete my account…": the dialog lists Front desk,
// linked to its People tab, to hand it over first; she gives her password, deletes, and is
// on the sign-in screen, signed out; her password signs no one in any more.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import {
  JOURNEY_TIMEOUT,
  journeyBrowser,
  SIZES,
  type Size,
  startJourney,
} from '../helpers/journey.ts'
import {
  goTo,
  newStatus,
  onScreen,
  plansWithoutRateLimit,
  signUpWithPage,
} from '../helpers/journey-people.ts'

const chromium = journeyBrowser()

for (const size of Object.keys(SIZES) as Size[]) {
  describe(`deleting your account (${size})`, {
    skip: chromiumMissing(),
    timeout: JOURNEY_TIMEOUT,
  }, () => {
    it('Ada sees the status Olivia follows listed, deletes her account and is signed out', async (t) => {
      const j = await startJourney(t, chromium(), {
        env: { SIGNUP: 'open', PLANS_FILE: plansWithoutRateLimit(t) },
      })
      j.expectResponse(401, '/v1/user')
      const olivia = await j.open(size)
      await j.setUp(olivia, {
        name: 'Olivia',
        email: 'olivia@example.com',
        password: GOOD_PASSWORD,
      })
      const ada = await j.open(size)
      await signUpWithPage(ada, j.url, {
        name: 'Ada',
        email: 'ada@example.com',
        password: GOOD_PASSWORD,
      })
      const desk = await newStatus(ada, { name: 'Front desk', value: 'OPEN' })

      // Olivia follows it: Ada offers her the subscriber role (from her signed-in page), and
      // Olivia accepts it (by the API, with the key the first start printed)
      const key = { 'service-api-key': j.firstApiKey() }
      const oliviaId = (
        (await (await fetch(`${j.url}/v1/user`, { headers: key })).json()) as {
          id: string
        }
      ).id
      const offered = (await ada.evaluate(
        ([statusId, userId]) =>
          fetch(`/v1/status/${statusId}/users/${userId}`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ role: 'subscriber' }),
          }).then((r) => r.json()),
        [desk, oliviaId] as const,
      )) as { id: string }
      const accepted = await fetch(`${j.url}/v1/user/invitations/${offered.id}/accept`, {
        method: 'POST',
        headers: key,
      })
      assert.equal(accepted.status, 200, await accepted.text())

      // under Account, "Delete my account…": the dialog lists Front desk, with a way to its People tab
      await goTo(ada, 'Account')
      await ada.getByRole('button', { name: 'Delete my account…' }).click()
      const dialog = ada.getByRole('dialog', { name: 'Delete your account for good?' })
      const listed = dialog.getByRole('link', { name: 'Front desk' })
      await listed.waitFor()
      assert.equal(await listed.getAttribute('href'), `/statuses/${desk}/people`)
      await dialog.getByText('shared with 1 other person').waitFor()
      await j.check(ada, `the dialog deleting an account (${size})`)

      // her password, and the account is gone: the sign-in screen, signed out
      await dialog.getByLabel('Your password').fill(GOOD_PASSWORD)
      await dialog.getByRole('button', { name: 'Delete my account', exact: true }).click()
      await onScreen(ada, 'Sign in')
      assert.equal(new URL(ada.url()).pathname, '/sign-in')
      await j.check(ada, `signed out after deleting the account (${size})`)

      // the old password signs no one in
      j.expectResponse(401, '/v1/auth/login')
      await ada.getByLabel('E-mail').fill('ada@example.com')
      await ada.getByLabel('Password').fill(GOOD_PASSWORD)
      await ada.getByRole('button', { name: 'Sign in', exact: true }).click()
      await ada.getByRole('alert').first().waitFor()
      assert.equal(new URL(ada.url()).pathname, '/sign-in')

      // Olivia's board no longer has the status she followed
      const gone = await fetch(`${j.url}/v1/status/${desk}`, { headers: key })
      assert.equal(gone.status, 404)
      await gone.arrayBuffer()
    })
  })
}
