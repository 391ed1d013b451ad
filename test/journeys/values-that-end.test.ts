import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { asSession } from '../helpers/accounts.ts'
import { appServer, expectScreen, openApp, signUpPerson } from '../helpers/app-browser.ts'
import { expectTileValue, makeStatus, tile } from '../helpers/app-statuses.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import { testClock } from '../helpers/clock.ts'

// Values that end in the app (docs/app.md#values-that-end): Ada sets "Meeting room 4"
// OCCUPIED for 15 minutes on her board at her desk (1280×800), sees "Then FREE at …" on the
// tile and, on her phone (390×844), on the status screen; she sets it for 1 hour from the
// phone and until a time of day from the desk; when the end comes, both screens show FREE
// at once and the pending end is gone. An end is 1 minute to 366 days ahead, so the server
// runs in this process on a clock the test moves (the timed worker's pass is run after each
// move) rather than a `statusd serve` whose end would take real minutes. Each page fails the
// test on a console error (a CSP violation among them), and on axe's findings where it is
// checked.

const MINUTE = 60_000

/** The pending end under the value on `scope`: its text and its instant. */
async function pendingEnd(scope: ReturnType<Page['locator']>) {
  const end = scope.locator('.value-end')
  await end.waitFor()
  return {
    text: ((await end.textContent()) ?? '').replace(/\s+/g, ' ').trim(),
    at: await end.locator('time').getAttribute('datetime'),
  }
}

describe('values that end, in the app', { skip: chromiumMissing(), timeout: 360_000 }, () => {
  it('Ada sets the room OCCUPIED for a while on her board and her phone, and sees it end', async (ctx) => {
    const clock = testClock()
    const server = await appServer(ctx, { clock })
    const ada = await signUpPerson(server, { name: 'Ada' })
    const room = await makeStatus(server, ada, 'meeting-room-4', {
      name: 'Meeting room 4',
      value: 'FREE',
      palette: [
        { value: 'FREE', colorNo: 3 },
        { value: 'OCCUPIED', colorNo: 2 },
      ],
    })
    const read = async () =>
      (await asSession(server.t, ada.cookie, 'GET', `/v1/status/${room.id}`)).json()

    // at her desk: the board's tile, "for 15 min", then a tap on OCCUPIED
    const { page: desk } = await openApp(ctx, server, { person: ada })
    await expectScreen(desk, 'Board')
    const deskTile = tile(desk, 'Meeting room 4')
    await deskTile.getByLabel('Keep it (Meeting room 4)').selectOption({ label: 'for 15 min' })
    await deskTile.getByRole('button', { name: 'OCCUPIED' }).click()
    await expectTileValue(desk, 'Meeting room 4', 'OCCUPIED')
    const first = await read()
    assert.equal(first.valueAfter, 'FREE')
    // counted on the server's clock, which stands still
    assert.equal(Date.parse(first.valueUntil), clock.now() + 15 * MINUTE)
    const onTile = await pendingEnd(deskTile)
    assert.match(onTile.text, /^Then FREE at \d{1,2}:\d{2}/)
    assert.equal(Date.parse(onTile.at ?? ''), Date.parse(first.valueUntil))
    // the next tap has no end unless chosen again
    assert.equal(await deskTile.getByLabel('Keep it (Meeting room 4)').inputValue(), 'changed')
    await expectNoAxeViolations(desk, 'board with a pending end, desktop')

    // on her phone: the status screen shows the same end, and "for 1 h" moves it
    const { page: phone } = await openApp(ctx, server, {
      person: ada,
      path: `/statuses/${room.id}`,
      viewport: { width: 390, height: 844 },
    })
    await expectScreen(phone, 'Meeting room 4')
    const onScreen = await pendingEnd(phone.locator('.status-now'))
    assert.equal(onScreen.at, onTile.at)
    assert.ok(
      await phone.evaluate('document.documentElement.scrollWidth <= innerWidth'),
      'the status screen fits the phone',
    )
    await expectNoAxeViolations(phone, 'status screen with a pending end, phone')
    await phone.getByLabel('Keep it (Meeting room 4)').selectOption({ label: 'for 1 h' })
    await phone.getByRole('button', { name: 'OCCUPIED' }).click()
    // live: the desk's tile follows the phone's write
    await deskTile
      .locator('.value-end time')
      .and(desk.locator(`time:not([datetime="${onTile.at}"])`))
      .waitFor()
    const second = await read()
    assert.equal(Date.parse(second.valueUntil), clock.now() + 60 * MINUTE)
    assert.equal(second.valueAfter, 'FREE')

    // until a time: the time field appears with its own label
    await deskTile.getByLabel('Keep it (Meeting room 4)').selectOption({ label: 'until a time…' })
    const timeField = deskTile.getByLabel('Time the value ends')
    await timeField.waitFor()
    await expectNoAxeViolations(desk, 'board choosing a time, desktop')
    const later = new Date(Date.now() + 3 * 60 * MINUTE)
    const hhmm = `${String(later.getHours()).padStart(2, '0')}:${String(later.getMinutes()).padStart(2, '0')}`
    await timeField.fill(hhmm)
    await deskTile.getByRole('button', { name: 'OCCUPIED' }).click()
    await phone
      .locator('.status-now .value-end time')
      .and(phone.locator(`time:not([datetime="${second.valueUntil}"])`))
      .waitFor()
    const third = await read()
    later.setSeconds(0, 0)
    assert.equal(Date.parse(third.valueUntil), later.getTime())

    // the end comes: FREE on both screens at once, and no end is pending
    clock.advance(3 * 60 * MINUTE + MINUTE)
    assert.equal(await server.t.app.timed.runOnce(), 1)
    await expectTileValue(desk, 'Meeting room 4', 'FREE')
    await phone.locator('.status-now .value-chip').filter({ hasText: 'FREE' }).waitFor()
    await deskTile.locator('.value-end').waitFor({ state: 'detached' })
    await phone.locator('.status-now .value-end').waitFor({ state: 'detached' })
    const ended = await read()
    assert.deepEqual([ended.value, ended.valueUntil, ended.valueAfter], ['FREE', null, null])
    await expectNoAxeViolations(phone, 'status screen after the end, phone')

    // the board on the phone: the choice and the time field wrap under the buttons
    await phone.getByRole('link', { name: 'Board' }).first().click()
    await expectScreen(phone, 'Board')
    const phoneTile = tile(phone, 'Meeting room 4')
    await phoneTile.getByLabel('Keep it (Meeting room 4)').selectOption({ label: 'until a time…' })
    await phoneTile.getByLabel('Time the value ends').waitFor()
    assert.ok(
      await phone.evaluate('document.documentElement.scrollWidth <= innerWidth'),
      'the board fits the phone',
    )
    await expectNoAxeViolations(phone, 'board choosing a time, phone')
  })
})
