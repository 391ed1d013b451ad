import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { asSession } from '../helpers/accounts.ts'
import { appServer, expectScreen, openApp, signUpPerson } from '../helpers/app-browser.ts'
import { createAs, describedText, giveRole } from '../helpers/app-statuses.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'

// A status's screen (docs/app.md#a-status): editing with the API's messages at the fields,
// the palette editor, deletion behind a confirmation, history as a timeline and a chart
// (uPlot, loaded with that tab only), and the screen kept live.

describe('a status', { skip: chromiumMissing(), timeout: 300_000 }, () => {
  it('edits every setting; a refused one shows the API’s message at its field', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const room = await createAs(server, person, 'room', { name: 'Room', value: 'FREE' })
    const { page } = await openApp(ctx, server, {
      person,
      path: `/statuses/${room.id}`,
      allowConsoleErrors: true,
    })
    await expectScreen(page, 'Room')
    await page.getByLabel('Name').fill('Ro')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByLabel('Name').and(page.locator('[aria-invalid="true"]')).waitFor()
    assert.match(await describedText(page, 'Name'), /at least 3 characters/)
    await page.getByRole('alert').first().waitFor()
    let read = (await asSession(server.t, person.cookie, 'GET', `/v1/status/${room.id}`)).json()
    assert.equal(read.name, 'Room', 'a refused request changed nothing')

    await page.getByLabel('Name').fill('Big room')
    await page.getByLabel('Value', { exact: true }).fill('BUSY')
    await page.getByRole('radio', { name: 'purple' }).check()
    await page.getByLabel('Description').fill('Ground floor\nnext to the lift')
    await page
      .getByRole('group', { name: 'Who may see it' })
      .getByRole('radio', { name: /Public/ })
      .check()
    await page
      .getByRole('group', { name: 'Who may see its history' })
      .getByRole('radio', { name: 'You and people with a role' })
      .check()
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Saved.').waitFor()
    await expectScreen(page, 'Big room')
    read = (await asSession(server.t, person.cookie, 'GET', `/v1/status/${room.id}`)).json()
    assert.equal(read.name, 'Big room')
    assert.equal(read.value, 'BUSY')
    assert.equal(read.colorNo, 5)
    assert.equal(read.description, 'Ground floor\nnext to the lift')
    assert.equal(read.accessType, 'public')
    assert.equal(read.accessTypeHistory, 'private')
    assert.equal(read.changeCount, 2)
  })

  it('the palette editor adds, orders and removes values with their colours; one tap sets one', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const door = await createAs(server, person, 'door', { name: 'Door', value: 'OPEN' })
    const { page } = await openApp(ctx, server, { person, path: `/statuses/${door.id}` })
    await expectScreen(page, 'Door')
    const add = page.getByRole('button', { name: 'Add a value' })
    for (const [value, colour] of [
      ['OPEN', 'green'],
      ['SHUT', 'red'],
      ['AJAR', 'amber'],
    ] as const) {
      await add.click()
      const n = await page.locator('.palette-row').count()
      await page.getByLabel(`Palette value ${n}`, { exact: true }).fill(value)
      await page.getByLabel(`Colour of palette value ${n}`).selectOption({ label: colour })
    }
    await page.getByRole('button', { name: 'Move palette value 3 up' }).click()
    await page.getByRole('button', { name: 'Remove palette value 1' }).click()
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByText('Saved.').waitFor()
    const read = (await asSession(server.t, person.cookie, 'GET', `/v1/status/${door.id}`)).json()
    assert.deepEqual(read.palette, [
      { value: 'AJAR', colorNo: 4 },
      { value: 'SHUT', colorNo: 2 },
    ])
    const buttons = page.getByRole('list', { name: 'Set Door' })
    await buttons.getByRole('button', { name: 'SHUT' }).click()
    await page.locator('.status-value .value-chip', { hasText: 'SHUT' }).waitFor()
    const after = (await asSession(server.t, person.cookie, 'GET', `/v1/status/${door.id}`)).json()
    assert.equal(after.value, 'SHUT')
    assert.equal(after.colorNo, 2)
    // twelve at most: the thirteenth cannot be added
    for (let i = 0; i < 10; i++) await add.click()
    assert.equal(await page.locator('.palette-row').count(), 12)
    assert.equal(await add.isDisabled(), true)
  })

  it('a value the palette holds twice is refused with the API’s message at that entry', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const door = await createAs(server, person, 'door', { name: 'Door', value: 'OPEN' })
    const { page } = await openApp(ctx, server, {
      person,
      path: `/statuses/${door.id}`,
      allowConsoleErrors: true,
    })
    await expectScreen(page, 'Door')
    for (let n = 1; n <= 2; n++) {
      await page.getByRole('button', { name: 'Add a value' }).click()
      await page.getByLabel(`Palette value ${n}`, { exact: true }).fill('SAME')
    }
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.locator('.palette-row .field-error').first().waitFor()
    assert.match(
      (await page.locator('.palette-row .field-error').first().textContent()) ?? '',
      /Value 2: .*unique/i,
    )
  })

  it('shows the status’s key with ready-to-copy curl, command and device lines that work as copied', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const room = await createAs(server, person, 'meeting-room-4', {
      name: 'Meeting room 4',
      value: 'OCCUPIED',
      palette: [
        { value: 'FREE', colorNo: 3 },
        { value: 'OCCUPIED', colorNo: 2 },
      ],
    })
    const { page, context } = await openApp(ctx, server, {
      person,
      path: `/statuses/${room.id}`,
      viewport: { width: 390, height: 844 },
    })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: server.origin,
    })
    await expectScreen(page, 'Meeting room 4')
    const section = page.getByRole('region', { name: 'From scripts and devices' })
    assert.equal(await section.getByRole('textbox', { name: 'Key' }).inputValue(), 'meeting-room-4')
    const url = `${server.origin}/v1/status-keys/meeting-room-4`
    const lines = {
      curl: `curl -fsS -X POST ${url} -H "service-api-key: $KEY" -H 'content-type: application/json' -d '{"value":"FREE"}'`,
      command: 'npx statusd set meeting-room-4 FREE',
      device: `echo FREE | curl -fsS -T- ${url}/value -H "service-api-key: $KEY"`,
    }
    assert.equal(await section.getByRole('textbox', { name: 'curl' }).inputValue(), lines.curl)
    assert.equal(
      await section.getByRole('textbox', { name: 'Command' }).inputValue(),
      lines.command,
    )
    assert.equal(
      await section.getByRole('textbox', { name: 'Device (plain text)' }).inputValue(),
      lines.device,
    )
    await section.getByRole('button', { name: 'Copy device line' }).click()
    await section.getByText('Copied', { exact: true }).waitFor()
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), lines.device)
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'))

    // the device line, as copied, sets the value (the plain-text PUT) with a key of the owner's
    const key = await asSession(server.t, person.cookie, 'POST', '/v1/user/api-keys', {
      label: 'door',
    })
    assert.equal(key.statusCode, 201, key.body)
    const put = await fetch(`${url}/value`, {
      method: 'PUT',
      headers: { 'service-api-key': key.json().key, 'content-type': 'text/plain' },
      body: 'FREE\n',
    })
    assert.equal(put.status, 200, await put.text())
    await page.locator('.status-now .value-chip', { hasText: 'FREE' }).waitFor()
    // a follower sees no key: the key is the owner's name for the status
    const other = await signUpPerson(server, { name: 'Bo' })
    await giveRole(server, person, room.id, other, 'subscriber')
    const theirs = await openApp(ctx, server, { person: other, path: `/statuses/${room.id}` })
    await expectScreen(theirs.page, 'Meeting room 4')
    assert.equal(
      await theirs.page.getByRole('region', { name: 'From scripts and devices' }).count(),
      0,
    )
  })

  it('deleting asks in a dialog: Cancel keeps the status, Delete deletes it and goes to the board', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const old = await createAs(server, person, 'old', { name: 'Old sign', value: 'X' })
    const { page } = await openApp(ctx, server, { person, path: `/statuses/${old.id}` })
    await expectScreen(page, 'Old sign')
    await page.getByRole('button', { name: 'Delete status…' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete “Old sign”?' })
    await dialog.waitFor()
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    let read = await asSession(server.t, person.cookie, 'GET', `/v1/status/${old.id}`)
    assert.equal(read.statusCode, 200)
    await page.getByRole('button', { name: 'Delete status…' }).click()
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await expectScreen(page, 'Board')
    read = await asSession(server.t, person.cookie, 'GET', `/v1/status/${old.id}`)
    assert.equal(read.statusCode, 404)
    await page.getByRole('link', { name: 'Create a status' }).waitFor()
  })

  it('history: a timeline and a chart, whose code (uPlot) loads with that tab only', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server, { name: 'Hana' })
    const meter = await createAs(server, person, 'meter', { name: 'Meter', value: '10' })
    for (const value of ['12', '9'])
      await asSession(server.t, person.cookie, 'PATCH', `/v1/status/${meter.id}`, { value })
    // the last value from a device: its key's label shows (docs/sharing.md#history)
    const sensor = await asSession(server.t, person.cookie, 'POST', '/v1/user/api-keys', {
      label: 'meter sensor',
      scopes: ['status:value'],
      statusIds: [meter.id],
    })
    const device = { id: person.id, key: sensor.json().key as string }
    await server.t.request(device, 'PATCH', `/v1/status/${meter.id}`, { value: '15' })
    const mood = await createAs(server, person, 'mood', { name: 'Mood', value: 'OK' })
    for (const value of ['GREAT', 'OK', 'MEH'])
      await asSession(server.t, person.cookie, 'PATCH', `/v1/status/${mood.id}`, { value })
    const scripts: string[] = []
    const { page } = await openApp(ctx, server, { person, path: '/sign-in' })
    page.on('request', (request) => {
      if (request.resourceType() === 'script') scripts.push(new URL(request.url()).pathname)
    })
    await page.goto(`${server.origin}/statuses/${meter.id}`)
    await expectScreen(page, 'Meter')
    assert.equal(scripts.filter((s) => s.includes('/history-')).length, 0, 'no chart code yet')
    await page
      .getByRole('navigation', { name: 'Status' })
      .getByRole('link', { name: 'History' })
      .click()
    await page.waitForURL((url) => url.pathname === `/statuses/${meter.id}/history`)
    const timeline = page.getByRole('list', { name: 'Value updates, newest first' })
    await timeline.waitFor()
    assert.deepEqual(
      (await timeline.locator('.value-chip').allTextContents()).map((s) => s.trim()),
      ['15', '9', '12', '10'],
    )
    assert.match(
      (await timeline.locator('li').first().textContent()) ?? '',
      /by Hana with the key “meter sensor”/,
    )
    assert.doesNotMatch(
      (await timeline.locator('li').nth(1).textContent()) ?? '',
      /with the key/,
      'a value set in the app names no key',
    )
    await page.locator('.value-chart canvas').waitFor()
    assert.equal(scripts.filter((s) => s.includes('/history-')).length, 1, 'the chart chunk')
    const img = page.getByRole('img', { name: /Chart of the last 4 values/ })
    await img.waitFor()

    // text values: one level per distinct value, named on the axis (the chart draws them)
    await page.goto(`${server.origin}/statuses/${mood.id}/history`)
    await expectScreen(page, 'Mood')
    await page.locator('.value-chart canvas').waitFor()
    assert.equal(await page.locator('.timeline li').count(), 4)

    // a new value, written elsewhere, appears in the open history
    await asSession(server.t, person.cookie, 'PATCH', `/v1/status/${mood.id}`, { value: 'SUPER' })
    await page.locator('.timeline li').first().filter({ hasText: 'SUPER' }).waitFor()
  })

  it('the screen is live: a PATCH elsewhere shows without a reload; a deletion is said', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const other = await signUpPerson(server, { name: 'Uma' })
    const lamp = await createAs(server, person, 'lamp', { name: 'Lamp', value: 'ON' })
    await giveRole(server, person, lamp.id, other, 'updater')
    const { page } = await openApp(ctx, server, { person: other, path: `/statuses/${lamp.id}` })
    await expectScreen(page, 'Lamp')
    // an updater sets the value and nothing else
    assert.equal(await page.getByRole('button', { name: 'Save changes' }).count(), 0)
    await page.getByRole('button', { name: 'Set value' }).waitFor()
    await asSession(server.t, person.cookie, 'PATCH', `/v1/status/${lamp.id}`, {
      value: 'OFF',
      name: 'Hall lamp',
    })
    await expectScreen(page, 'Hall lamp')
    await page.locator('.status-value .value-chip', { hasText: 'OFF' }).waitFor()
    await asSession(server.t, person.cookie, 'DELETE', `/v1/status/${lamp.id}`)
    await page.getByRole('alert').filter({ hasText: 'This status was deleted.' }).waitFor()
  })

  for (const colorScheme of ['light', 'dark'] as const)
    for (const width of [375, 1280])
      it(`the board, a new status and a status's tabs pass axe (${colorScheme}, ${width} px)`, async (ctx) => {
        const server = await appServer(ctx)
        const person = await signUpPerson(server)
        const palette = [
          { value: 'FREE', colorNo: 3 },
          { value: 'BUSY', colorNo: 2 },
        ]
        const room = await createAs(server, person, 'room', {
          name: 'Room',
          value: 'FREE',
          palette,
          description: 'Upstairs',
        })
        await asSession(server.t, person.cookie, 'PATCH', `/v1/status/${room.id}`, {
          value: 'BUSY',
        })
        await createAs(server, person, 'desk', { name: 'Desk' })
        const label = `${colorScheme}, ${width} px`
        const { page } = await openApp(ctx, server, {
          person,
          viewport: { width, height: 800 },
          colorScheme,
        })
        await page.locator('li.board-tile .value-chip', { hasText: 'BUSY' }).waitFor()
        await expectNoAxeViolations(page, `board, ${label}`)
        await page.goto(`${server.origin}/statuses/new`)
        await expectScreen(page, 'New status')
        await expectNoAxeViolations(page, `new status, ${label}`)
        await page.goto(`${server.origin}/statuses/${room.id}`)
        await page.getByRole('button', { name: 'Save changes' }).waitFor()
        await expectNoAxeViolations(page, `status overview, ${label}`)
        await page.getByRole('button', { name: 'Delete status…' }).click()
        await page.getByRole('dialog').waitFor()
        await expectNoAxeViolations(page, `delete dialog, ${label}`)
        await page.keyboard.press('Escape')
        await page.goto(`${server.origin}/statuses/${room.id}/history`)
        await page.locator('.value-chart canvas').waitFor()
        await expectNoAxeViolations(page, `status history, ${label}`)
      })
})
