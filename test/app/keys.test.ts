import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { asSession } from '../helpers/accounts.ts'
import {
  type AppServer,
  appServer,
  expectScreen,
  openApp,
  type Person,
  signUpPerson,
} from '../helpers/app-browser.ts'
import { chromiumMissing } from '../helpers/browser.ts'

// The API keys screen (docs/app.md#api-keys) in real Chromium: a key made in the page works
// against the API with exactly the rights chosen (docs/accounts.md#scoped-keys); rotation,
// revocation and revoke-all take effect at once.

/** A status of `person`'s, made through the API; its id. */
async function statusOf(server: AppServer, person: Person, key: string, name: string) {
  const res = await asSession(server.t, person.cookie, 'POST', `/v1/status-keys/${key}`, {
    name,
    value: 'OPEN',
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id as string
}

/** A request with an API key. */
const withKey = (
  server: AppServer,
  key: string,
  method: 'GET' | 'PATCH' | 'POST',
  url: string,
  body?: unknown,
) => server.t.request(null, method, url, body, { 'service-api-key': key })

/** The secret the page shows once, from its read-only field. */
async function shownSecret(page: Page): Promise<string> {
  const panel = page.locator('.secret-once')
  await panel.waitFor()
  assert.match((await panel.textContent()) ?? '', /you will not see it again/i)
  const secret = await panel.getByLabel('Secret').inputValue()
  assert.match(secret, /^sdk_/)
  return secret
}

/** Confirms the open dialog with its button `name`. */
async function confirm(page: Page, name: string): Promise<void> {
  const dialog = page.getByRole('dialog')
  await dialog.getByRole('button', { name }).click()
  await dialog.waitFor({ state: 'hidden' })
}

describe('the API keys screen', { skip: chromiumMissing(), timeout: 360_000 }, () => {
  it('creates a scoped key confined to one status; the secret shown once works with exactly those rights', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const door = await statusOf(server, person, 'front-door', 'Front door')
    const other = await statusOf(server, person, 'back-door', 'Back door')
    const { page, context } = await openApp(ctx, server, { person, path: '/keys' })
    await expectScreen(page, 'API keys')

    await page.getByText('Create a key').click()
    await page.getByLabel('Label').fill('door sensor')
    for (const scope of ['status:write', 'status:manage'])
      await page.getByRole('checkbox', { name: new RegExp(`^${scope}:`) }).uncheck()
    await page.getByRole('radio', { name: /Only these/ }).check()
    await page.getByRole('checkbox', { name: 'Front door' }).check()
    await page.getByRole('button', { name: 'Create the key' }).click()
    const secret = await shownSecret(page)
    // the copy button puts exactly the secret on the clipboard
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: server.origin,
    })
    await page.locator('.secret-once').getByRole('button', { name: 'Copy' }).click()
    await page.getByText('Copied to the clipboard.').waitFor()
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), secret)

    const auth = (await withKey(server, secret, 'GET', '/v1/checkAuth')).json()
    assert.deepEqual(auth.credential.scopes, ['status:read', 'status:value'])
    assert.deepEqual(auth.credential.statusIds, [door])
    assert.equal((await withKey(server, secret, 'GET', `/v1/status/${door}`)).statusCode, 200)
    assert.equal((await withKey(server, secret, 'GET', `/v1/status/${other}`)).statusCode, 404)
    const value = await withKey(server, secret, 'PATCH', `/v1/status/${door}`, { value: 'SHUT' })
    assert.equal(value.statusCode, 200, value.body)
    const rename = await withKey(server, secret, 'PATCH', `/v1/status/${door}`, {
      name: 'Side door',
    })
    assert.equal(rename.statusCode, 403)
    assert.equal(rename.json().errorCode, 'insufficientScope')
    assert.equal((await withKey(server, secret, 'POST', '/v1/user/api-keys', {})).statusCode, 403)

    // listed with what it may do, never with its secret
    const item = page.locator('.key-item').filter({ hasText: 'door sensor' })
    await item.getByText('status:read, status:value').waitFor()
    await item.getByText('Front door').waitFor()
    await page.getByRole('button', { name: 'I have copied it' }).click()
    await page.reload()
    await expectScreen(page, 'API keys')
    await item.waitFor()
    assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again')
  })

  it('rotates a key: the new secret is shown once, the old one is refused at once (no grace) or works through its grace period', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const made = await asSession(server.t, person.cookie, 'POST', '/v1/user/api-keys', {
      label: 'ci runner',
    })
    const first = made.json()
    const { page } = await openApp(ctx, server, { person, path: '/keys' })
    await expectScreen(page, 'API keys')

    await page.getByRole('button', { name: `Rotate ci runner (${first.prefix})` }).click()
    await confirm(page, 'Rotate the key')
    const second = await shownSecret(page)
    assert.notEqual(second, first.key)
    assert.equal((await withKey(server, first.key, 'GET', '/v1/checkAuth')).statusCode, 401)
    assert.equal((await withKey(server, second, 'GET', '/v1/checkAuth')).statusCode, 200)
    await page.getByRole('button', { name: 'I have copied it' }).click()

    // with a grace period the replaced key goes on working, and the list says so
    const secondPrefix = second.slice(0, 12)
    await page.getByRole('button', { name: `Rotate ci runner (${secondPrefix})` }).click()
    await page.getByRole('dialog').getByLabel('The old key keeps working for').selectOption({
      label: 'One hour',
    })
    await confirm(page, 'Rotate the key')
    const third = await shownSecret(page)
    assert.equal((await withKey(server, second, 'GET', '/v1/checkAuth')).statusCode, 200)
    assert.equal((await withKey(server, third, 'GET', '/v1/checkAuth')).statusCode, 200)
    await page
      .locator('.key-item')
      .filter({ hasText: secondPrefix })
      .getByText('replaced, still working')
      .waitFor()
  })

  it('revokes a key after a confirmation; cancelling changes nothing', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const key = (
      await asSession(server.t, person.cookie, 'POST', '/v1/user/api-keys', { label: 'laptop' })
    ).json()
    const { page } = await openApp(ctx, server, { person, path: '/keys' })
    await expectScreen(page, 'API keys')
    const revoke = page.getByRole('button', { name: `Revoke laptop (${key.prefix})` })

    await revoke.click()
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click()
    assert.equal((await withKey(server, key.key, 'GET', '/v1/checkAuth')).statusCode, 200)

    await revoke.click()
    await confirm(page, 'Revoke the key')
    await page.getByText('laptop was revoked').waitFor()
    assert.equal((await withKey(server, key.key, 'GET', '/v1/checkAuth')).statusCode, 401)
    await page
      .locator('.key-item')
      .filter({ hasText: 'laptop' })
      .getByText('revoked')
      .first()
      .waitFor()
    assert.equal(await revoke.count(), 0, 'a revoked key offers no more actions')
  })

  it('revokes every key but the one chosen to keep', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const make = async (label: string) =>
      (await asSession(server.t, person.cookie, 'POST', '/v1/user/api-keys', { label })).json()
    const a = await make('sensor a')
    const b = await make('sensor b')
    const keep = await make('keeper')
    const { page } = await openApp(ctx, server, { person, path: '/keys' })
    await expectScreen(page, 'API keys')

    await page.getByRole('button', { name: 'Revoke all keys' }).click()
    await page
      .getByRole('dialog')
      .getByLabel('Keep one working')
      .selectOption({ label: `keeper (${keep.prefix}…)` })
    await confirm(page, 'Revoke them')
    await page.getByText('2 keys were revoked.').waitFor()
    for (const gone of [a, b])
      assert.equal((await withKey(server, gone.key, 'GET', '/v1/checkAuth')).statusCode, 401)
    assert.equal((await withKey(server, keep.key, 'GET', '/v1/checkAuth')).statusCode, 200)

    // and without keeping one, the last goes too
    await page.getByRole('button', { name: 'Revoke all keys' }).click()
    await confirm(page, 'Revoke them')
    await page.getByText('1 key was revoked.').waitFor()
    assert.equal((await withKey(server, keep.key, 'GET', '/v1/checkAuth')).statusCode, 401)
    assert.ok(await page.getByRole('button', { name: 'Revoke all keys' }).isDisabled())
  })

  it('hostile labels and status names are shown as text, and nothing overflows at 375 px', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const hostile = '<img src=x onerror=alert(1)>'
    const rtl = '\u202Eevil\u200B\u200Dname'
    await statusOf(server, person, 'hostile-status', hostile)
    await asSession(server.t, person.cookie, 'POST', '/v1/user/api-keys', { label: hostile })
    await asSession(server.t, person.cookie, 'POST', '/v1/user/api-keys', { label: rtl })
    const { page } = await openApp(ctx, server, {
      person,
      path: '/keys',
      viewport: { width: 375, height: 800 },
    })
    const dialogs: string[] = []
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message())
      dialog.dismiss().catch(() => {})
    })
    await expectScreen(page, 'API keys')
    await page.locator('.key-label').filter({ hasText: hostile }).waitFor()
    await page.locator('.key-label').filter({ hasText: rtl }).waitFor()
    await page.getByText('Create a key').click()
    await page.getByRole('radio', { name: /Only these/ }).check()
    await page.getByRole('checkbox', { name: hostile }).waitFor()
    assert.equal(await page.locator('main img').count(), 0, 'no markup from data')
    assert.deepEqual(dialogs, [])
    assert.ok(
      await page.evaluate('document.documentElement.scrollWidth <= innerWidth'),
      'no horizontal scrolling at 375 px',
    )
  })
})
