import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import { asSession } from '../helpers/accounts.ts'
import { appServer, expectScreen, openApp, signUpPerson } from '../helpers/app-browser.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'

// Account's "Download your data" (docs/app.md#account, docs/accounts.md#export-your-data) in
// real Chromium, at phone and desktop sizes: the button saves the export as a file.

const SIZES = [
  { label: 'phone', viewport: { width: 390, height: 844 } },
  { label: 'desktop', viewport: { width: 1280, height: 900 } },
]

describe('downloading your data', { skip: chromiumMissing(), timeout: 240_000 }, () => {
  for (const { label, viewport } of SIZES) {
    it(`Account's button saves the whole export as a JSON file (${label})`, async (ctx) => {
      const server = await appServer(ctx)
      const person = await signUpPerson(server, { name: 'Ada' })
      const made = await asSession(server.t, person.cookie, 'POST', '/v1/status-keys/room', {
        name: 'Room',
        value: 'FREE',
      })
      assert.equal(made.statusCode, 201, made.body)
      const { page } = await openApp(ctx, server, { person, path: '/account', viewport })
      await expectScreen(page, 'Account')
      const button = page.getByRole('link', { name: 'Download your data' })
      await button.scrollIntoViewIfNeeded()
      await expectNoAxeViolations(page, `account with the export, ${label}`)

      const [download] = await Promise.all([page.waitForEvent('download'), button.click()])
      assert.match(download.suggestedFilename(), /^statusd-export-\d{4}-\d{2}-\d{2}\.json$/)
      const doc = JSON.parse(await readFile(await download.path(), 'utf8'))
      assert.equal(doc.format, 'statusd-export/1')
      assert.equal(doc.profile.id, person.id)
      assert.equal(doc.profile.email, person.email)
      assert.deepEqual(
        doc.statuses.map((s: { name: string; history: { value: string }[] }) => [
          s.name,
          s.history.map((h) => h.value),
        ]),
        [['Room', ['FREE']]],
      )
      assert.equal(doc.sessions.length, 1)
      assert.ok(!JSON.stringify(doc).includes(person.cookie), 'no session token in the file')
      // the page stays where it was: a download, not a navigation
      await expectScreen(page, 'Account')
    })
  }
})
