// Handing a status over (docs/sharing.md#transfer, docs/app.md#people-and-invitations), as
// people do it at phone and desktop sizes: Olivia, who set statusd up, makes "Front desk" and
// has Uma follow it; under People she hands it over to Uma; Uma's banner offers it, she
// accepts, and the status is hers: on her People tab Olivia is an updater.
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
  confirmDialog,
  newStatus,
  onScreen,
  plansWithoutRateLimit,
  signUpWithPage,
} from '../helpers/journey-people.ts'

const chromium = journeyBrowser()

for (const size of Object.keys(SIZES) as Size[]) {
  describe(`handing a status over (${size})`, {
    skip: chromiumMissing(),
    timeout: JOURNEY_TIMEOUT,
  }, () => {
    it('Olivia offers Front desk to Uma under People; Uma accepts it from her banner', async (t) => {
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
      const uma = await j.open(size)
      await signUpWithPage(uma, j.url, {
        name: 'Uma',
        email: 'uma@example.com',
        password: GOOD_PASSWORD,
      })
      const desk = await newStatus(olivia, { name: 'Front desk', value: 'OPEN' })

      // Uma follows it: Olivia offers her the subscriber role (by the API, with the key the
      // first start printed), and Uma accepts it from her banner
      const me = (await uma.evaluate("fetch('/v1/user').then((r) => r.json())")) as { id: string }
      const offered = await fetch(`${j.url}/v1/status/${desk}/users/${me.id}`, {
        method: 'PUT',
        headers: { 'service-api-key': j.firstApiKey(), 'content-type': 'application/json' },
        body: JSON.stringify({ role: 'subscriber' }),
      })
      assert.equal(offered.status, 202, await offered.text())
      await uma.reload()
      await uma.getByRole('button', { name: 'Accept the invitation to Front desk' }).click()
      await uma.getByRole('region', { name: 'Invitations for you' }).waitFor({ state: 'hidden' })

      // under People, Olivia hands it over to Uma
      await olivia.goto(`${j.url}/statuses/${desk}/people`)
      await onScreen(olivia, 'Front desk')
      await olivia.getByRole('button', { name: 'Hand over to Uma' }).click()
      await olivia.getByRole('dialog').getByText('Once they accept, they own it').waitFor()
      await j.check(olivia, `the hand-over dialog (${size})`)
      await confirmDialog(olivia, 'Offer it')
      await olivia.getByText(/^This status offered to a new owner since/).waitFor()
      await j.check(olivia, `People with a hand-over pending (${size})`)

      // Uma's banner offers it; she accepts, and owns it
      await uma.reload()
      const banner = uma.getByRole('region', { name: 'Invitations for you' })
      await banner.getByText('you would own it').waitFor()
      await j.check(uma, `the banner offering a status (${size})`)
      await banner.getByRole('button', { name: 'Accept the invitation to Front desk' }).click()
      await banner.waitFor({ state: 'hidden' })
      await uma.goto(`${j.url}/statuses/${desk}/people`)
      await onScreen(uma, 'Front desk')
      const role = uma.getByRole('combobox', { name: 'Role of Olivia' })
      await role.waitFor()
      assert.equal(await role.inputValue(), 'updater')
      await j.check(uma, `People of the status Uma now owns (${size})`)

      // Olivia, now an updater, may no longer see who has a role (the new owner keeps the
      // list to themself, as by default), nor hand it over
      j.expectResponse(403, `/v1/status/${desk}/users`)
      await olivia.goto(`${j.url}/statuses/${desk}/people`)
      await onScreen(olivia, 'Front desk')
      await olivia.getByText('The owner keeps the list of people on this status').waitFor()
      assert.equal(await olivia.getByRole('button', { name: /^Hand over/ }).count(), 0)
    })
  })
}
