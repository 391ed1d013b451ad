import { describe, it } from 'node:test'
import { recordSecurityEvent } from '../../src/modules/audit/security-events.ts'
import { asSession } from '../helpers/accounts.ts'
import { appServer, expectScreen, openApp, signUpPerson } from '../helpers/app-browser.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import { SIZES, type Size } from '../helpers/journey.ts'

// The security log in the app (docs/app.md#security-log) in real Chromium, at a phone's and
// a desktop's size: the Account screen's section lists what happened to the account in
// words, newest first, pages on to older events; an operator's audit screen lists every
// account's and narrows them by kind. No console error, no CSP violation (openApp fails the
// test on either), no axe finding.

for (const size of Object.keys(SIZES) as Size[]) {
  const { viewport } = SIZES[size]
  describe(`the security log in the app (${size})`, {
    skip: chromiumMissing(),
    timeout: 300_000,
  }, () => {
    it('Account lists sign-ins, failed sign-ins and new keys, newest first, and pages on', async (ctx) => {
      const server = await appServer(ctx)
      const ada = await signUpPerson(server, { name: 'Ada', email: 'ada@example.com' })
      const made = await asSession(server.t, ada.cookie, 'POST', '/v1/user/api-keys', {
        label: 'laptop',
      })
      if (made.statusCode !== 201) throw new Error(made.body)
      const refused = await server.t.request(null, 'POST', '/v1/auth/login', {
        email: 'ada@example.com',
        password: 'not the password at all',
      })
      if (refused.statusCode !== 401) throw new Error(refused.body)
      // older events than one page holds: the list pages on to them
      for (let i = 0; i < 20; i++)
        await recordSecurityEvent(
          server.t.database.db,
          { kind: 'signOut', userId: ada.id, actorId: ada.id, ip: '192.0.2.1', userAgent: null },
          new Date(Date.now() - (i + 1) * 86_400_000).toISOString(),
        )

      const { page } = await openApp(ctx, server, { person: ada, path: '/account', viewport })
      await expectScreen(page, 'Account')
      const log = page.getByRole('region', { name: 'Security log' })
      const list = log.getByRole('list', { name: 'Your security events, newest first' })
      const items = list.getByRole('listitem')
      await items.first().waitFor()
      await items.nth(0).getByText('Failed sign-in: a wrong password').waitFor()
      // (the sign-up and the key may share an instant: their order is not checked)
      await list.getByText('Made the API key “laptop”').waitFor()
      const signUp = items.filter({ hasText: 'Signed in by signing up' })
      await signUp.getByText('from 127.0.0.1').waitFor()
      await expectNoAxeViolations(page, `Account's security log (${size})`)

      await log.getByRole('button', { name: 'Older events' }).click()
      await items.nth(22).waitFor()
      await items.nth(22).getByText('Signed out').waitFor()
    })

    it("an operator's audit screen lists every account's events and narrows them by kind", async (ctx) => {
      const server = await appServer(ctx)
      const op = await signUpPerson(server, { name: 'Olga', email: 'olga@example.com' })
      await server.t.database.db
        .updateTable('users')
        .set({ admin: 1 })
        .where('id', '=', op.id)
        .execute()
      const bob = await signUpPerson(server, { name: 'Bob', email: 'bob@example.com' })
      const refused = await server.t.request(null, 'POST', '/v1/auth/login', {
        email: 'nobody@example.com',
        password: 'a guess of a password',
      })
      if (refused.statusCode !== 401) throw new Error(refused.body)

      const { page } = await openApp(ctx, server, { person: op, path: '/admin/audit', viewport })
      await expectScreen(page, 'Audit log')
      const list = page.getByRole('list', {
        name: 'Security events of every account, newest first',
      })
      await list.getByText('Failed sign-in: an address with no account').waitFor()
      await list.getByRole('listitem').filter({ hasText: 'Bob' }).first().waitFor()
      await expectNoAxeViolations(page, `the audit screen (${size})`)

      await page.getByLabel('Kind').selectOption({ label: 'Sign-in' })
      await page.getByLabel('Account id').fill(bob.id)
      await page.getByRole('button', { name: 'Show' }).click()
      await page.waitForURL(/kind=signIn/)
      const narrowed = list.getByRole('listitem')
      await narrowed.first().getByText('Signed in by signing up').waitFor()
      await list.getByText('Failed sign-in').waitFor({ state: 'detached' })
      if ((await narrowed.count()) !== 1) throw new Error('one sign-in of Bob')
    })
  })
}
