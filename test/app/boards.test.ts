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

// The boards screens (docs/app.md#boards-screens): making a board from my statuses, its
// wall's link, changing its statuses and their order, deleting it, and a status's boards
// on its share tab, in real Chromium.

const boardsOf = async (server: AppServer, person: Person) =>
  (await asSession(server.t, person.cookie, 'GET', '/v1/boards')).json() as {
    id: string
    name: string
    statusIds: string[]
    accessType: string
    url: string
  }[]

describe('the boards screens', { skip: chromiumMissing(), timeout: 600_000 }, () => {
  it('makes a board from my statuses, copies its wall link, reorders it, and deletes it after asking', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const a = await makeStatus(server, owner, 'a', { name: 'Room A', value: 'FREE' })
    const b = await makeStatus(server, owner, 'b', { name: 'Room B', value: 'BUSY' })
    const { page, context } = await openApp(ctx, server, { person: owner, path: '/boards' })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: server.origin,
    })
    await expectScreen(page, 'Walls')
    await page.getByText('No boards yet.').waitFor()
    await page.getByLabel('Name').fill('Second floor')
    await page.getByRole('checkbox', { name: 'Room A' }).check()
    await page.getByRole('checkbox', { name: 'Room B' }).check()
    await page.getByRole('button', { name: 'Make board' }).click()
    await expectScreen(page, 'Second floor')
    const [board] = await boardsOf(server, owner)
    assert.ok(board)
    assert.deepEqual(board.statusIds, [a.id, b.id])
    assert.equal(board.accessType, 'public')
    assert.equal(await page.getByRole('textbox', { name: 'Wall link' }).inputValue(), board.url)
    await page.getByRole('button', { name: 'Copy wall link' }).click()
    await page.getByText('Copied', { exact: true }).waitFor()
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), board.url)
    assert.equal(
      await page.getByRole('link', { name: 'Open the wall' }).getAttribute('href'),
      board.url,
    )

    await page.getByRole('button', { name: 'Move Room B up' }).click()
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Board saved.').first().waitFor({ state: 'attached' })
    assert.deepEqual((await boardsOf(server, owner))[0]?.statusIds, [b.id, a.id])

    await page.getByRole('button', { name: 'Remove Room A from the board' }).click()
    await page.getByRole('button', { name: 'Save' }).click()
    await page.waitForFunction(`document.querySelectorAll('.board-order li').length === 1`)
    await page.getByText('Board saved.').first().waitFor({ state: 'attached' })
    assert.deepEqual((await boardsOf(server, owner))[0]?.statusIds, [b.id])

    await page.getByRole('button', { name: 'Delete board' }).click()
    const dialog = page.getByRole('dialog')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    assert.equal((await boardsOf(server, owner)).length, 1, 'cancel deletes nothing')
    await page.getByRole('button', { name: 'Delete board' }).click()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await expectScreen(page, 'Walls')
    assert.deepEqual(await boardsOf(server, owner), [])
  })

  it('a board with no status is refused with the API’s message, nothing made', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server)
    await makeStatus(server, owner, 'a', { name: 'Room A', value: 'FREE' })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: '/boards',
      allowConsoleErrors: true,
    })
    await expectScreen(page, 'Walls')
    await page.getByLabel('Name').fill('Empty')
    await page.getByRole('button', { name: 'Make board' }).click()
    await page.locator('.field-error, .form-error').first().waitFor()
    assert.deepEqual(await boardsOf(server, owner), [])
  })

  it('the share tab puts a status on my boards and takes it off', async (ctx) => {
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

  it('a hostile board name is text', async (ctx) => {
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
      path: '/boards',
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
      it(`the boards screens pass axe (${colorScheme}, ${width} px)`, async (ctx) => {
        const server = await appServer(ctx)
        const owner = await signUpPerson(server)
        const a = await makeStatus(server, owner, 'a', { name: 'Room A', value: 'FREE' })
        const b = await makeStatus(server, owner, 'b', { name: 'Room B', value: 'FREE' })
        const made = await asSession(server.t, owner.cookie, 'POST', '/v1/boards', {
          name: 'Hall',
          statusIds: [a.id, b.id],
        })
        assert.equal(made.statusCode, 201, made.body)
        const { page } = await openApp(ctx, server, {
          person: owner,
          path: '/boards',
          viewport: { width, height: 800 },
          colorScheme,
        })
        await expectScreen(page, 'Walls')
        await page.getByRole('link', { name: 'Hall', exact: true }).waitFor()
        await expectNoAxeViolations(page, `boards, ${colorScheme}, ${width} px`)
        await page.getByRole('link', { name: 'Hall', exact: true }).click()
        await expectScreen(page, 'Hall')
        await page.getByRole('button', { name: 'Move Room B up' }).waitFor()
        await expectNoAxeViolations(page, `a board, ${colorScheme}, ${width} px`)
      })
})
