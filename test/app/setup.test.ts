import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { systemClock } from '../../src/lib/clock.ts'
import { ensureFirstUser } from '../../src/modules/users/first-user.ts'
import { createSetupLink } from '../../src/modules/users/setup.service.ts'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { TEST_PLANS } from '../helpers/app.ts'
import { type AppServer, appServer, expectScreen, openApp } from '../helpers/app-browser.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'

// The setup screen (docs/app.md#the-first-start) where the journey does not go: what it says
// for a refused form (the API's own message at the field, the link still working), for a
// link never made, and where a passkey cannot be made (an IP address).

/** The first user and the path of its setup link, as the first start makes them. */
async function setupPath(server: AppServer): Promise<string> {
  const first = await ensureFirstUser(server.t.database.db, TEST_PLANS)
  assert.ok(first)
  const link = await createSetupLink(server.t.database.db, systemClock, first.user.id, '')
  return link.url
}

describe('the setup screen', { skip: chromiumMissing(), timeout: 300_000 }, () => {
  it('a refused password is shown at its field, and the corrected form completes the setup', async (ctx) => {
    const server = await appServer(ctx, { signup: 'invite' })
    const path = await setupPath(server)
    const { page } = await openApp(ctx, server, { path })
    await expectScreen(page, 'Set up statusd')
    await page.getByLabel('Name').fill('Ada')
    await page.getByLabel('E-mail').fill('ada@example.com')
    await page.getByLabel('Password').fill('password1234')
    await page.getByRole('button', { name: 'Finish setup' }).click()
    const password = page.getByLabel('Password')
    await page.locator('[aria-invalid="true"]').first().waitFor()
    assert.equal(await password.getAttribute('aria-invalid'), 'true')
    await expectNoAxeViolations(page, 'the setup screen with a refused password')
    await password.fill(GOOD_PASSWORD)
    await page.getByRole('button', { name: 'Finish setup' }).click()
    await expectScreen(page, 'Board')
  })

  it('a link never made says so, and what to do', async (ctx) => {
    const server = await appServer(ctx, { signup: 'invite' })
    const { page } = await openApp(ctx, server, { path: `/setup/sdl_${'x'.repeat(43)}` })
    await expectScreen(page, 'This setup link is not valid')
    await page.getByText('statusd user link <id>').waitFor()
    await expectNoAxeViolations(page, 'a setup link never made')
  })

  it('on an IP address, no passkey is offered (a passkey needs a host name)', async (ctx) => {
    const server = await appServer(ctx, { signup: 'invite' })
    const path = await setupPath(server)
    const { page } = await openApp(ctx, server, { path: '/sign-in' })
    await page.goto(`${server.origin.replace('localhost', '127.0.0.1')}${path}`)
    await expectScreen(page, 'Set up statusd')
    await page.getByRole('button', { name: 'Finish setup' }).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Use a passkey instead' }).count(), 0)
    // on localhost, the same screen offers one
    await page.goto(`${server.origin}${path}`)
    await page.getByRole('button', { name: 'Use a passkey instead' }).waitFor()
  })
})
