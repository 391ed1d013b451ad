import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DEFAULT_PLANS, type Plans } from '../../src/modules/plans/plans.ts'
import { TEST_PLANS } from '../helpers/app.ts'
import {
  type AppServer,
  appServer,
  expectScreen,
  openApp,
  signUpPerson,
} from '../helpers/app-browser.ts'
import { expectTileValue, makeStatus, makeUnlimited } from '../helpers/app-statuses.ts'
import { chromiumMissing } from '../helpers/browser.ts'

// The app over its plan's requests a minute (docs/app.md#too-many-requests): the server's
// 429 `rateLimited` is said in words with the wait its Retry-After names, reads are asked
// again once that wait is over (the page's clock is moved by the test, not waited for), and
// a board view asks for each thing once.

/** The tests' plans and `tight`: the free plan allowing `requestsPerMinute`. */
const tightPlans = (requestsPerMinute: number): Plans => ({
  ...TEST_PLANS,
  tight: { ...(DEFAULT_PLANS.free as Plans[string]), requestsPerMinute },
})

const onPlan = (server: AppServer, id: string, plan: string) =>
  server.t.database.db.updateTable('users').set({ plan }).where('id', '=', id).execute()

const ROOM = { name: 'Meeting room 4', value: 'FREE' }

describe('too many requests', { skip: chromiumMissing(), timeout: 240_000 }, () => {
  it('a board view asks for who is signed in, the invitations, both lists and one stream, each once', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    await makeStatus(server, person, 'meeting-room-4', ROOM)
    const { page } = await openApp(ctx, server, { person, path: '/keys' })
    await expectScreen(page, 'API keys')
    // the keys screen's own reads done, so that only the board's are counted below
    await page.waitForLoadState('networkidle')
    const asked: string[] = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.pathname.startsWith('/v1/')) asked.push(`${request.method()} ${url.pathname}`)
    })
    const invitations = page.waitForResponse((r) => r.url().endsWith('/v1/user/invitations'))
    await page.goto(`${server.origin}/`)
    await expectTileValue(page, 'Meeting room 4', 'FREE')
    await invitations
    assert.deepEqual(asked.sort(), [
      'GET /v1/events',
      'GET /v1/user',
      'GET /v1/user/invitations',
      'GET /v1/user/status',
      'GET /v1/user/subscriptions',
    ])
  })

  it('over the plan’s requests a minute the app says so in words and reads again after Retry-After', async (ctx) => {
    // the board's first view asks four reads before its stream: the fourth is one too many
    const server = await appServer(ctx, {}, { plans: tightPlans(3) })
    const person = await signUpPerson(server)
    await makeStatus(server, person, 'meeting-room-4', ROOM)
    await onPlan(server, person.id, 'tight')
    const refused = new Set<string>()
    const { page } = await openApp(ctx, server, { person, fakeClock: true, path: '/keys' })
    page.on('response', (response) => {
      if (response.status() === 429) refused.add(response.headers()['retry-after'] ?? '')
    })
    // the keys screen's reads (its key list and the board's shared lists) run over the limit
    const notice = page.getByRole('status').filter({ hasText: 'Too many requests' })
    await notice.waitFor()
    assert.match(
      (await notice.textContent()) ?? '',
      /^Too many requests — trying again in \d+ s\./,
      'the wait in words, no raw error',
    )
    assert.equal(await page.getByRole('alert').count(), 0, 'no error shown for a read')
    // the minute passes: the server counts afresh (here: a plan without a limit), and once
    // the page's clock has passed the wait the server named, the app asks again by itself
    await onPlan(server, person.id, 'unlimited')
    const seconds = Math.max(...[...refused].map(Number))
    assert.ok(seconds > 0 && seconds <= 60, `Retry-After ${seconds}`)
    await page.clock.fastForward(seconds * 1000 + 1000)
    await expectScreen(page, 'API keys')
    await page.getByRole('link', { name: 'Board' }).first().click()
    await expectTileValue(page, 'Meeting room 4', 'FREE')
    await page.clock.fastForward(2000)
    await notice.waitFor({ state: 'detached' })
  })

  it('a change refused with 429 says in words how long to wait, and is not sent again by itself', async (ctx) => {
    const server = await appServer(ctx, {}, { plans: tightPlans(0) })
    const person = await signUpPerson(server)
    const room = await makeStatus(server, person, 'meeting-room-4', ROOM)
    await makeUnlimited(server, person)
    const { page } = await openApp(ctx, server, { person, path: `/statuses/${room.id}` })
    await expectScreen(page, 'Meeting room 4')
    // the screen has read what it needs: from now on every request is one too many
    await page.getByLabel('Value', { exact: true }).waitFor()
    await onPlan(server, person.id, 'tight')
    const writes: string[] = []
    page.on('request', (request) => {
      if (request.method() === 'PATCH') writes.push(request.url())
    })
    await page.getByLabel('Value', { exact: true }).fill('BUSY')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: /^Too many requests — try again in \d+ s\.$/ })
      .waitFor()
    assert.equal(writes.length, 1, 'the refused change was sent once')
  })
})
