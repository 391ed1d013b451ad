// Journeys through docs/sharing.md and the sharing half of docs/accounts.md (invitations,
// invitation links, private share links, discovery), as Olivia shares her statuses in one
// day on one `statusd serve` that mails (SIGNUP=open, the real SMTP test server): Olivia at
// her desk (1280×800), Sam on his phone (390×844), a stranger's phone and a wall display, in
// the file's one Chromium (test/helpers/journey.ts: each step fails on a console error, a
// page error, a CSP violation, a failed or unannounced 4xx/5xx request, or an axe violation
// on a screen it checks).
//
// 1. A public status: made on the New status screen; its share link (Share tab) opens on a
//    stranger's phone; its badge loads (the tab's preview, and the badge's own URL).
// 2. Live updates: the value set on the status screen shows on the stranger's open share
//    page and on a wall (made on the Walls screen, opened on a display) without a reload.
// 3. An invitation by e-mail: made on a private status's People tab, mailed to Sam; its
//    page leads Sam to sign up, and the status is on his board.
// 4. An invitation by link, and an offered role: Sam accepts an updater link signed in,
//    declines a role Olivia offers on the People tab, then accepts the next offer.
// 5. A private share link: made on the Share tab, opened signed out, live; revoked on the
//    tab, the open page says so at once.
// 6. An updater at work: Sam sets the room's value on his phone; the wall follows.
// 7. Made private while a share page is open: the page says it is not available, and goes
//    live again when the status is public again.
// 8. Discovery: a public status made findable on its screen; Sam finds it on the Find
//    screen and follows it there, and it is on his board.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { GOOD_PASSWORD } from '../helpers/accounts.ts'
import { chromiumMissing } from '../helpers/browser.ts'
import { journeyBrowser, startJourney } from '../helpers/journey.ts'
import {
  confirmDialog,
  fitsTheScreen,
  goTo,
  mailedLink,
  newStatus,
  onScreen,
  plansWithoutRateLimit,
  signUpWithPage,
} from '../helpers/journey-people.ts'

const chromium = journeyBrowser()

describe('sharing', () => {
  it('Olivia’s day: public page, badge, live page and wall, invitations, private link, search', {
    skip: chromiumMissing(),
    timeout: 900_000,
  }, async (t) => {
    const j = await startJourney(t, chromium(), {
      smtp: true,
      localhost: true,
      env: {
        SIGNUP: 'open',
        PLANS_FILE: plansWithoutRateLimit(t),
      },
    })
    const origin = j.url
    j.expectResponse(401, '/v1/user')
    const olivia = await j.open('desktop')
    const sam = await j.open('phone')
    const stranger = await j.open('phone')
    const wall = await j.open('desktop')
    let room = ''
    let lab = ''
    let roomShareId = ''

    const setValue = async (statusId: string, value: string) => {
      await olivia.goto(`${origin}/statuses/${statusId}`)
      await olivia.getByLabel('Value', { exact: true }).fill(value)
      await olivia.getByRole('button', { name: 'Save changes' }).click()
      await olivia.getByText('Saved.').waitFor()
    }

    await t.test(
      'Olivia signs up, confirms her address, makes a public and a private status',
      async () => {
        // a new account may not see statuses until it is confirmed: the board's lists say 403
        j.expectResponse(403, /^\/v1\/user\/(status|subscriptions)$/)
        await signUpWithPage(olivia, origin, {
          name: 'Olivia',
          email: 'olivia@example.com',
          password: GOOD_PASSWORD,
        })
        const { link } = await mailedLink(j, 'olivia@example.com', origin, '/auth/verify/')
        await olivia.goto(link)
        await olivia.getByRole('button', { name: 'Confirm my address' }).click()
        await olivia.getByRole('link', { name: 'Continue' }).click()
        await onScreen(olivia, 'Board')
        room = await newStatus(olivia, { name: 'Meeting room 4', value: 'FREE', public: true })
        lab = await newStatus(olivia, { name: 'Lab', value: 'OPEN', public: false })
      },
    )

    await t.test('the share link opens on a stranger’s phone, and the badge loads', async () => {
      await olivia.goto(`${origin}/statuses/${room}`)
      await goTo(olivia, 'Share', 'Meeting room 4')
      const shareUrl = await olivia.getByRole('textbox', { name: 'Share link' }).inputValue()
      roomShareId = new URL(shareUrl).pathname.split('/')[2] as string
      assert.ok(shareUrl.startsWith(`${origin}/s/`), shareUrl)
      await olivia.getByRole('img', { name: 'Badge preview: Meeting room 4' }).waitFor()
      await olivia.waitForFunction("document.querySelector('.badge-preview img')?.naturalWidth > 0")
      await j.check(olivia, 'share tab, desktop')

      await stranger.goto(shareUrl)
      await stranger.locator('#value-text').filter({ hasText: 'FREE' }).waitFor()
      await stranger.locator('#live[data-state="live"]').waitFor()
      assert.ok(await fitsTheScreen(stranger), 'the share page fits the phone')
      await j.check(stranger, 'share page, phone')
      const badge = await stranger.request.get(`${shareUrl}/badge.svg`)
      assert.equal(badge.status(), 200)
      assert.match(await badge.text(), /FREE/)
    })

    await t.test(
      'a value set on the status screen shows live on the share page and a wall',
      async () => {
        await goTo(olivia, 'Walls')
        await olivia.getByLabel('Name').fill('Second floor')
        await olivia.getByRole('checkbox', { name: 'Meeting room 4' }).check()
        await olivia.getByRole('button', { name: 'Make wall' }).click()
        await onScreen(olivia, 'Second floor')
        const wallUrl = await olivia
          .getByRole('link', { name: 'Open the wall' })
          .getAttribute('href')
        assert.ok(wallUrl)
        await wall.goto(new URL(wallUrl, origin).href)
        await wall.locator('li.tile .value').filter({ hasText: 'FREE' }).waitFor()
        await j.check(wall, 'wall, desktop')

        await setValue(room, 'BUSY')
        await stranger.locator('#value-text').filter({ hasText: 'BUSY' }).waitFor()
        await wall.locator('li.tile .value').filter({ hasText: 'BUSY' }).waitFor()
      },
    )

    await t.test(
      'an invitation by e-mail leads Sam to sign up, with the status on his board',
      async () => {
        await olivia.goto(`${origin}/statuses/${lab}/people`)
        await onScreen(olivia, 'Lab')
        await olivia.getByLabel('E-mail (optional)').fill('sam@example.com')
        await olivia.getByRole('button', { name: 'Make invitation' }).click()
        await olivia.locator('.once', { hasText: 'Mailed to sam@example.com' }).waitFor()
        await j.check(olivia, 'people tab with an invitation, desktop')

        const { link } = await mailedLink(j, 'sam@example.com', origin, '/invite/')
        await sam.goto(link)
        await sam.getByRole('heading', { name: 'Lab' }).waitFor()
        assert.ok(await fitsTheScreen(sam), 'the invitation page fits the phone')
        await j.check(sam, 'invitation page, phone')
        await sam.getByRole('link', { name: 'Sign up and accept' }).click()
        await onScreen(sam, 'Create an account')
        await sam.getByText('Olivia invites you to follow Lab').waitFor()
        await sam.getByLabel('Name').fill('Sam')
        await sam.getByLabel('E-mail').fill('sam@example.com')
        await sam.getByLabel('Password').fill(GOOD_PASSWORD)
        await sam.getByRole('button', { name: 'Sign up and accept' }).click()
        await onScreen(sam, 'Board')
        await sam.locator('li.board-tile').filter({ hasText: 'Lab' }).waitFor()
        await j.check(sam, 'board after accepting, phone')
      },
    )

    await t.test(
      'Sam accepts an updater link signed in, declines an offered role, accepts the next',
      async () => {
        await olivia.goto(`${origin}/statuses/${room}/people`)
        await onScreen(olivia, 'Meeting room 4')
        await olivia.getByLabel('Role', { exact: true }).selectOption('updater')
        await olivia.getByRole('button', { name: 'Make invitation' }).click()
        const url = await olivia.getByRole('textbox', { name: 'Invitation link' }).inputValue()
        // signed in, the invitation's page offers Accept itself, and leads to the status
        await sam.goto(url)
        await j.check(sam, 'invitation page signed in, phone')
        await sam.getByRole('button', { name: 'Accept' }).click()
        await onScreen(sam, 'Meeting room 4')
        await goTo(sam, 'Board')
        await sam.locator('li.board-tile').filter({ hasText: 'Meeting room 4' }).waitFor()

        // on Lab, Sam is a subscriber: Olivia offers him the updater role; he declines
        await olivia.goto(`${origin}/statuses/${lab}/people`)
        await olivia.getByLabel('Role of Sam').selectOption('updater')
        await olivia.getByText(/Sam is invited to be an updater/).waitFor({ state: 'attached' })
        await sam.reload()
        await sam.getByRole('heading', { name: 'Invitations for you' }).waitFor()
        await j.check(sam, 'board with an invitation for me, phone')
        await sam.getByRole('button', { name: 'Decline the invitation to Lab' }).click()
        await sam.getByText('You declined the invitation to Lab.').waitFor({ state: 'attached' })
        await olivia.reload()
        await onScreen(olivia, 'Lab')
        assert.equal(await olivia.getByLabel('Role of Sam').inputValue(), 'subscriber')

        await olivia.getByLabel('Role of Sam').selectOption('updater')
        await olivia.getByText(/Sam is invited to be an updater/).waitFor({ state: 'attached' })
        await sam.reload()
        await sam.getByRole('button', { name: 'Accept the invitation to Lab' }).click()
        await sam.getByText('You accepted the invitation to Lab.').waitFor({ state: 'attached' })
        await olivia.reload()
        await onScreen(olivia, 'Lab')
        assert.equal(await olivia.getByLabel('Role of Sam').inputValue(), 'updater')
      },
    )

    await t.test(
      'a private link opens signed out and live; revoked, the open page ends',
      async () => {
        await olivia.goto(`${origin}/statuses/${lab}/share`)
        await onScreen(olivia, 'Lab')
        // a private status's badge answers 404: the tab asks for none, and says so
        await olivia.getByText('No preview while the status is private').waitFor()
        await olivia.getByRole('button', { name: 'Make a private link' }).click()
        const url = await olivia.getByRole('textbox', { name: 'Private link' }).inputValue()
        await stranger.goto(url)
        await stranger.locator('#value-text').filter({ hasText: 'OPEN' }).waitFor()
        await stranger.locator('#live[data-state="live"]').waitFor()
        await j.check(stranger, 'private link page, phone')
        await setValue(lab, 'SHUT')
        await stranger.locator('#value-text').filter({ hasText: 'SHUT' }).waitFor()

        await olivia.goto(`${origin}/statuses/${lab}/share`)
        await olivia.getByRole('button', { name: /^Revoke the link made/ }).click()
        await confirmDialog(olivia, 'Revoke link')
        await olivia.getByRole('cell', { name: 'Revoked' }).waitFor()
        await stranger.getByText('This link no longer works').waitFor()
        await j.check(stranger, 'private link page after revoking, phone')
      },
    )

    await t.test(
      'Sam, now an updater, sets the room from his phone; the wall and the share page follow',
      async () => {
        await sam.goto(`${origin}/statuses/${room}`)
        await onScreen(sam, 'Meeting room 4')
        await sam.getByLabel('Value', { exact: true }).fill('FREE')
        await sam.getByRole('button', { name: 'Set value' }).click()
        await sam.getByText('Saved.').waitFor()
        await wall.locator('li.tile .value').filter({ hasText: 'FREE' }).waitFor()
        assert.ok(await fitsTheScreen(sam), 'the status screen fits the phone')
        await j.check(sam, 'status screen as an updater, phone')
      },
    )

    await t.test(
      'made private, the open share page says so; public again, it is live again',
      async () => {
        await stranger.goto(`${origin}/s/${roomShareId}`)
        await stranger.locator('#live[data-state="live"]').waitFor()
        // the page then asks the share view again and again: 404 while the status is private
        j.expectResponse(404, /^\/v1\/share\/[^/]+$/)
        await olivia.goto(`${origin}/statuses/${room}/share`)
        await onScreen(olivia, 'Meeting room 4')
        await olivia.getByRole('radio', { name: /^Private/ }).check()
        await olivia.getByText('The status is private.').waitFor({ state: 'attached' })
        await stranger.getByText('This status is not available right now').waitFor()
        await j.check(stranger, 'share page of a status made private, phone')
        await olivia.getByRole('radio', { name: /^Public/ }).check()
        await olivia.getByText('The status is public.').waitFor({ state: 'attached' })
        await stranger.locator('#live[data-state="live"]').waitFor()
        await stranger.locator('#value-text').filter({ hasText: 'FREE' }).waitFor()
      },
    )

    await t.test('Sam finds a listed public status by its name and follows it', async () => {
      const library = await newStatus(olivia, {
        name: 'Library opening hours',
        value: 'OPEN',
        public: true,
      })
      await olivia
        .getByRole('checkbox', { name: 'Let search find it (while it is public)' })
        .check()
      await olivia.getByRole('button', { name: 'Save changes' }).click()
      await olivia.getByText('Saved.').waitFor()

      // Sam looks for it from his board, on the Find screen (docs/accounts.md#discovery)
      await goTo(sam, 'Board')
      await sam.getByRole('link', { name: 'Find a status to follow' }).click()
      await onScreen(sam, 'Find a status')
      await sam.getByLabel('Words of its name').fill('lib hours')
      await sam.getByRole('button', { name: 'Search' }).click()
      await sam.getByText('1 found for “lib hours”.').waitFor()
      const result = sam.locator('.find-results li')
      assert.equal(await result.count(), 1)
      await result.getByText('Library opening hours').waitFor()
      await result.getByText('Olivia').waitFor()
      await j.check(sam, 'finding a status, phone')
      await sam.getByRole('button', { name: 'Follow Library opening hours' }).click()
      const following = result.getByRole('link', { name: 'Following' })
      await following.waitFor()
      assert.equal(await following.getAttribute('href'), `/statuses/${library}`)
      await goTo(sam, 'Board')
      await sam.locator('li.board-tile').filter({ hasText: 'Library opening hours' }).waitFor()
      await j.check(sam, 'board with a followed status, phone')
    })
  })
})
