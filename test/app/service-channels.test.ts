import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { asSession } from '../helpers/accounts.ts'
import { appServer, expectScreen, openApp, signUpPerson } from '../helpers/app-browser.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import { startReceiver } from '../helpers/webhook-receiver.ts'

// The push and chat services on the notifications screen (docs/app.md#notifications-in-the-app,
// docs/notifications.md#services) in real Chromium, at a phone's width and a desk's: a Gotify
// channel added through the form and tested against a real receiver on loopback
// (WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8), its token never shown again; a refused Telegram token
// said at its field; each service's form passes axe.

const TOKEN = 'AqZ9xW2vB7nK4mP'

describe('push and chat service channels in the app', {
  skip: chromiumMissing(),
  timeout: 360_000,
}, () => {
  for (const width of [375, 1280])
    it(`${width} px: adds a Gotify channel and tests it (the receiver gets POST /message with X-Gotify-Key); a bad Telegram token is said at its field; axe finds nothing`, async (ctx) => {
      const server = await appServer(ctx, { webhookAllowNetworks: ['127.0.0.0/8'] })
      const person = await signUpPerson(server)
      const receiver = await startReceiver(ctx)
      const { page } = await openApp(ctx, server, {
        person,
        path: '/notifications',
        viewport: { width, height: 800 },
      })
      await expectScreen(page, 'Notifications')
      const form = page.locator('form', {
        has: page.getByRole('heading', { name: 'A push or chat service' }),
      })

      for (const service of ['ntfy', 'gotify', 'pushover', 'telegram', 'matrix']) {
        await form.getByLabel('Service').selectOption(service)
        await form
          .getByRole('button', { name: new RegExp(`^Add the ${service} channel$`, 'i') })
          .waitFor()
        await expectNoAxeViolations(page, `the ${service} form, ${width} px`)
      }
      assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'))

      await form.getByLabel('Service').selectOption('gotify')
      await form.getByLabel('Name').fill('Phone')
      await form.getByLabel('Server').fill(`${receiver.origin}/gotify`)
      await form.getByLabel('Application token').fill(TOKEN)
      await form.getByLabel('Priority').fill('7')
      await form.getByRole('button', { name: 'Add the Gotify channel' }).click()
      await page.getByText('Gotify channel Phone added.').waitFor()
      const item = page.locator('.channel').filter({ hasText: 'Phone' })
      await item.getByText(`Gotify at ${receiver.origin}/gotify`).waitFor()
      assert.ok(!(await page.content()).includes(TOKEN), 'the token is not on the page')
      assert.equal(
        await form.getByLabel('Application token').inputValue(),
        '',
        'the form is cleared',
      )

      await item.getByRole('button', { name: 'Test Phone' }).click()
      const [request] = await receiver.received(1)
      assert.ok(request)
      assert.equal(request.method, 'POST')
      assert.equal(request.path, '/gotify/message')
      assert.equal(request.headers['x-gotify-key'], TOKEN)
      const body = JSON.parse(request.body)
      assert.equal(body.title, 'Test notification from statusd')
      assert.equal(body.priority, 7)
      const row = page.locator('.delivery-log tbody tr').filter({ hasText: 'channel.test' })
      await row.waitFor()
      assert.match((await row.textContent()) ?? '', /delivered \(HTTP 200\)/)

      await form.getByLabel('Service').selectOption('telegram')
      await form.getByLabel('Bot token').fill('not-a-token')
      await form.getByLabel('Chat').fill('@statusd_ops')
      await form.getByRole('button', { name: 'Add the Telegram channel' }).click()
      const token = form.getByLabel('Bot token')
      await form.locator('.field-error').first().waitFor()
      assert.equal(await token.getAttribute('aria-invalid'), 'true')
      await expectNoAxeViolations(page, `the telegram form with an error, ${width} px`)
      const channels = (
        await asSession(server.t, person.cookie, 'GET', '/v1/user/channels')
      ).json() as { type: string }[]
      assert.deepEqual(
        channels.map((c) => c.type),
        ['gotify'],
        'the refused Telegram channel was not made',
      )
    })
})
