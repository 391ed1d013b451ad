import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { makeApp } from '../helpers/app.ts'
import type { AppServer } from '../helpers/app-browser.ts'
import { expectScreen, openApp, signUpPerson } from '../helpers/app-browser.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { freePort } from '../helpers/webauthn.ts'
import { backedUpDatabase } from './databases.ts'

// The Backups screen (docs/app.md#backups) in real Chromium, at a phone's size and a
// desktop's: an operator takes a backup, sees it listed and downloads the very file.

/** A statusd for the app on a database that can be backed up, BACKUP_DIR set. */
async function backupServer(ctx: Lifetime): Promise<AppServer & { dir: string }> {
  const source = await backedUpDatabase(ctx)
  const port = await freePort()
  const origin = `http://localhost:${port}`
  const t = await makeApp(ctx, {
    databaseUrl: source.url,
    deps: {
      signup: 'open',
      publicUrl: origin,
      backups: { dir: source.dir, url: source.url, everyMs: 86_400_000, keep: 7 },
    },
  })
  await t.app.listen({ port, host: '127.0.0.1' })
  return { t, origin, dir: source.dir }
}

const SIZES = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 900 },
}

describe('the Backups screen', { skip: chromiumMissing(), timeout: 240_000 }, () => {
  for (const [size, viewport] of Object.entries(SIZES))
    it(`an operator backs up now, sees it listed with the schedule, and downloads that file (${size})`, async (ctx) => {
      const server = await backupServer(ctx)
      const person = await signUpPerson(server)
      await server.t.database.db
        .updateTable('users')
        .set({ admin: 1 })
        .where('id', '=', person.id)
        .execute()
      const { page } = await openApp(ctx, server, { person, path: '/admin/backups', viewport })
      await expectScreen(page, 'Backups')
      await page.getByText('A backup every 24h, the newest 7 kept.').waitFor()
      await page.getByText('No backup yet.').waitFor()
      await expectNoAxeViolations(page, `the Backups screen, empty, ${size}`)

      await page.getByRole('button', { name: 'Back up now' }).click()
      const download = page.getByRole('link', { name: /^Download the backup statusd-.*\.tar$/ })
      await download.waitFor()
      const name = ((await download.getAttribute('aria-label')) ?? '').replace(
        'Download the backup ',
        '',
      )
      await expectNoAxeViolations(page, `the Backups screen, one backup, ${size}`)

      const [file] = await Promise.all([page.waitForEvent('download'), download.click()])
      assert.equal(file.suggestedFilename(), name)
      const saved = await file.path()
      assert.deepEqual(readFileSync(saved), readFileSync(join(server.dir, name)))
    })

  it('a person who is not an operator is told so', async (ctx) => {
    const server = await backupServer(ctx)
    const person = await signUpPerson(server)
    // the first person is not made an operator here: only the first start's user is one
    const { page } = await openApp(ctx, server, { person, path: '/admin/backups' })
    await expectScreen(page, 'Not allowed')
    await page.getByText('This screen is for the operators of this statusd').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Back up now' }).count(), 0)
  })
})
