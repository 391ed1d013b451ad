import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { asSession } from '../helpers/accounts.ts'
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

// The walls screens (docs/app.md#walls-screens): making a wall from my statuses, its page's
// full address and QR code, changing its statuses and their order, the warning while a
// status on a public wall is private, deleting it, and a status's walls on its share tab, in
// real Chromium. The API calls a wall a board (/v1/boards); a person sees "wall".

const boardsOf = async (server: AppServer, person: Person) =>
  (await asSession(server.t, person.cookie, 'GET', '/v1/boards')).json() as {
    id: string
    name: string
    statusIds: string[]
    accessType: string
    url: string
  }[]

describe('the walls screens', { skip: chromiumMissing(), timeout: 600_000 }, () => {
  it('makes a wall from my statuses, copies its full link (no PUBLIC_URL), reorders it, and deletes it after asking', async (ctx) => {
    // no PUBLIC_URL: the API's board.url is a path, and the wall link must still be whole
    const server = await appServer(ctx, { publicUrl: null })
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const a = await makeStatus(server, owner, 'a', { name: 'Room A', value: 'FREE' })
    const b = await makeStatus(server, owner, 'b', { name: 'Room B', value: 'BUSY' })
    const { page, context } = await openApp(ctx, server, { person: owner, path: '/walls' })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: server.origin,
    })
    await expectScreen(page, 'Walls')
    await page.getByText('No walls yet.').waitFor()
    await page.getByLabel('Name').fill('Second floor')
    await page.getByRole('checkbox', { name: 'Room A' }).check()
    await page.getByRole('checkbox', { name: 'Room B' }).check()
    await page.getByRole('button', { name: 'Make wall' }).click()
    await expectScreen(page, 'Second floor')
    assert.match(new URL(page.url()).pathname, /^\/walls\//)
    const [board] = await boardsOf(server, owner)
    assert.ok(board)
    assert.deepEqual(board.statusIds, [a.id, b.id])
    assert.equal(board.accessType, 'public')
    assert.match(board.url, /^\/b\//, 'without PUBLIC_URL the API answers a path')
    const full = `${server.origin}${board.url}`
    assert.equal(await page.getByRole('textbox', { name: 'Wall link' }).inputValue(), full)
    await page.getByRole('button', { name: 'Copy wall link' }).click()
    await page.getByText('Copied', { exact: true }).waitFor()
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), full)
    assert.equal(
      await page.getByRole('link', { name: 'Open the wall page' }).getAttribute('href'),
      full,
    )
    // a QR code of the full address, for the phone or the screen by the door
    await page.getByRole('button', { name: 'Show QR code' }).click()
    await page.getByRole('img', { name: `QR code for ${full}` }).waitFor()
    // the list copies the full address too
    await page.getByRole('link', { name: 'Walls', exact: true }).first().click()
    await expectScreen(page, 'Walls')
    await page.getByRole('button', { name: 'Copy the wall link of Second floor' }).click()
    await page.getByText('Copied', { exact: true }).waitFor()
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), full)
    await page.getByRole('link', { name: 'Second floor', exact: true }).click()
    await expectScreen(page, 'Second floor')

    await page.getByRole('button', { name: 'Move Room B up' }).click()
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Wall saved.').first().waitFor({ state: 'attached' })
    assert.deepEqual((await boardsOf(server, owner))[0]?.statusIds, [b.id, a.id])

    await page.getByRole('button', { name: 'Remove Room A from the wall' }).click()
    await page.getByRole('button', { name: 'Save' }).click()
    await page.waitForFunction(`document.querySelectorAll('.board-order li').length === 1`)
    await page.getByText('Wall saved.').first().waitFor({ state: 'attached' })
    assert.deepEqual((await boardsOf(server, owner))[0]?.statusIds, [b.id])

    await page.getByRole('button', { name: 'Delete wall' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    assert.equal((await boardsOf(server, owner)).length, 1, 'cancel deletes nothing')
    await page.getByRole('button', { name: 'Delete wall' }).click()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await expectScreen(page, 'Walls')
    assert.deepEqual(await boardsOf(server, owner), [])
  })

  it('a wall’s former address (/boards/…) opens the same screen under /walls', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    const a = await makeStatus(server, owner, 'a', { name: 'Room A', value: 'FREE' })
    const made = await asSession(server.t, owner.cookie, 'POST', '/v1/boards', {
      name: 'Hall',
      statusIds: [a.id],
    })
    assert.equal(made.statusCode, 201, made.body)
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/boards/${made.json().id}`,
    })
    await expectScreen(page, 'Hall')
    assert.equal(new URL(page.url()).pathname, `/walls/${made.json().id}`)
    await page.goto(`${server.origin}/boards`)
    await expectScreen(page, 'Walls')
    assert.equal(new URL(page.url()).pathname, '/walls')
  })

  it('a private status on a public wall is warned of in the wall editor until it is made public', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    const a = await makeStatus(server, owner, 'a', {
      name: 'Room A',
      value: 'FREE',
      accessType: 'public',
    })
    const b = await makeStatus(server, owner, 'b', { name: 'Room B', value: 'BUSY' })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: '/walls',
      viewport: { width: 390, height: 844 },
    })
    await expectScreen(page, 'Walls')
    // the new-wall form warns as soon as a private status is picked for a public wall
    await page.getByLabel('Name').fill('Hall')
    await page.getByRole('checkbox', { name: 'Room A' }).check()
    const warning = page.getByRole('status').filter({ hasText: 'is private' })
    assert.equal(await warning.count(), 0, 'a public status needs no warning')
    await page.getByRole('checkbox', { name: 'Room B' }).check()
    await warning.waitFor()
    assert.match((await warning.textContent()) ?? '', /grey “Not available” tile/)
    await warning.getByRole('link', { name: 'Room B' }).waitFor()
    // a private wall shows nothing anyway: no warning
    await page.getByRole('radio', { name: /^Private/ }).check()
    await warning.waitFor({ state: 'detached' })
    await page.getByRole('radio', { name: /^Public/ }).check()
    await warning.waitFor()
    await page.getByRole('button', { name: 'Make wall' }).click()
    await expectScreen(page, 'Hall')
    // the wall's screen says it too, at the status, and the wall page shows the grey tile
    await warning.waitFor()
    await page.locator('.board-order li', { hasText: 'Room B' }).getByText('Private').waitFor()
    assert.equal(
      await page.locator('.board-order li', { hasText: 'Room A' }).locator('.private-mark').count(),
      0,
    )
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'))
    // made public (here through its Share tab's API call, by the owner elsewhere): the
    // warning goes without a reload
    const changed = await asSession(server.t, owner.cookie, 'PATCH', `/v1/status/${b.id}`, {
      accessType: 'public',
    })
    assert.equal(changed.statusCode, 200, changed.body)
    await warning.waitFor({ state: 'detached' })
    assert.equal(await page.locator('.private-mark').count(), 0)
    await expectNoAxeViolations(page, 'a wall without warning, 390 px')
    void a
  })

  it('a wall with no status is refused with the API’s message, nothing made', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    await makeStatus(server, owner, 'a', { name: 'Room A', value: 'FREE' })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: '/walls',
      allowConsoleErrors: true,
    })
    await expectScreen(page, 'Walls')
    await page.getByLabel('Name').fill('Empty')
    await page.getByRole('button', { name: 'Make wall' }).click()
    await page.locator('.field-error, .form-error').first().waitFor()
    assert.deepEqual(await boardsOf(server, owner), [])
  })

  it('the share tab puts a status on my walls and takes it off', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    const a = await makeStatus(server, owner, 'a', { name: 'Room A', value: 'FREE' })
    const b = await makeStatus(server, owner, 'b', { name: 'Room B', value: 'FREE' })
    const made = await asSession(server.t, owner.cookie, 'POST', '/v1/boards', {
      name: 'Hall',
      statusIds: [a.id],
    })
    assert.equal(made.statusCode, 201, made.body)
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${b.id}/share`,
    })
    await expectScreen(page, 'Room B')
    const box = page.getByRole('checkbox', { name: 'Hall' })
    assert.equal(await box.isChecked(), false)
    await box.check()
    await page.getByText('Added to Hall.').waitFor({ state: 'attached' })
    assert.deepEqual((await boardsOf(server, owner))[0]?.statusIds, [a.id, b.id])
    await box.uncheck()
    await page.getByText('Taken off Hall.').waitFor({ state: 'attached' })
    assert.deepEqual((await boardsOf(server, owner))[0]?.statusIds, [a.id])
  })

  it('a hostile wall name is text', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    const a = await makeStatus(server, owner, 'a', { name: 'Room A', value: 'FREE' })
    const name = '<img src=x onerror=alert(1)>\u202eקומה\u200b'
    const made = await asSession(server.t, owner.cookie, 'POST', '/v1/boards', {
      name,
      statusIds: [a.id],
    })
    assert.equal(made.statusCode, 201, made.body)
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: '/walls',
      viewport: { width: 375, height: 800 },
    })
    const dialogs: string[] = []
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      d.dismiss()
    })
    await page.getByRole('link', { name, exact: true }).click()
    await expectScreen(page, 'קומה')
    assert.equal(await page.locator('main h1').textContent(), name)
    assert.equal(await page.locator('main img[src="x"]').count(), 0)
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'))
    assert.deepEqual(dialogs, [])
  })

  for (const colorScheme of ['light', 'dark'] as const)
    for (const width of [375, 1280])
      it(`the walls screens pass axe (${colorScheme}, ${width} px)`, async (ctx) => {
        const server = await appServer(ctx)
        const owner = await signUpPerson(server)
        const a = await makeStatus(server, owner, 'a', {
          name: 'Room A',
          value: 'FREE',
          accessType: 'public',
        })
        const b = await makeStatus(server, owner, 'b', {
          name: 'Room B',
          value: 'FREE',
          accessType: 'private',
        })
        const made = await asSession(server.t, owner.cookie, 'POST', '/v1/boards', {
          name: 'Hall',
          statusIds: [a.id, b.id],
          accessType: 'public',
        })
        assert.equal(made.statusCode, 201, made.body)
        const { page } = await openApp(ctx, server, {
          person: owner,
          path: '/walls',
          viewport: { width, height: 800 },
          colorScheme,
        })
        await expectScreen(page, 'Walls')
        await page.getByRole('link', { name: 'Hall', exact: true }).waitFor()
        await expectNoAxeViolations(page, `walls, ${colorScheme}, ${width} px`)
        await page.getByRole('link', { name: 'Hall', exact: true }).click()
        await expectScreen(page, 'Hall')
        await page.getByRole('button', { name: 'Move Room B up' }).waitFor()
        // the private status's warning, and the QR code, are part of the screen axe judges
        await page.getByRole('status').filter({ hasText: 'here is private' }).waitFor()
        await page.getByRole('button', { name: 'Show QR code' }).click()
        await page.locator('img.qr-code').waitFor()
        await expectNoAxeViolations(page, `a wall, ${colorScheme}, ${width} px`)
      })
})
