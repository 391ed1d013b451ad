import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { WALL_CSP } from '../../src/web/wall.routes.ts'
import { PAGE_CSP } from '../../src/web/web.routes.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { bounded, waitingFor } from '../helpers/bounded.ts'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'
import { type Lifetime, tempDir } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'
import { TEST_ENGINE, testDatabase } from '../helpers/engine.ts'
import { createStatus } from '../helpers/sharing.ts'

// The wall page (docs/app.md#boards-and-the-wall) in real Chromium: live tiles over one
// stream, fitted to the screen without scrollbars, surviving a server restart and a status
// going private and public again, hostile names shown as text.

// note: bounds for waiting, not timing assertions; a broken page fails instead of hanging
const WAIT = { timeout: 20_000 }

/** The page's globals, typed just enough: the project's types are Node's, not the DOM's. */
type Rect = {
  left: number
  right: number
  top: number
  bottom: number
  width: number
  height: number
}
type El = {
  textContent: string | null
  className: string
  dataset: Record<string, string>
  scrollWidth: number
  clientWidth: number
  getBoundingClientRect(): Rect
  querySelector(s: string): El | null
}
type PageGlobal = {
  document: {
    querySelector(s: string): El | null
    querySelectorAll(s: string): El[]
    documentElement: {
      scrollWidth: number
      scrollHeight: number
      clientWidth: number
      clientHeight: number
    }
  }
  innerWidth: number
  innerHeight: number
  __sources: number
}

// note: functions, not strings: Playwright evaluates a string predicate with eval, which the
// page's CSP (rightly) forbids
const tileText = (page: Page, statusId: string, part: string, expected: string) =>
  page
    .waitForFunction(
      ([id, sel, want]) =>
        (globalThis as unknown as PageGlobal).document
          .querySelector(`[data-status-id="${id}"]`)
          ?.querySelector(sel)?.textContent === want,
      [statusId, part, expected] as const,
      WAIT,
    )
    .catch(waitingFor(`the tile ${statusId} to show ${part} ${JSON.stringify(expected)}`))
const tileClass = (page: Page, statusId: string, expected: RegExp) =>
  page
    .waitForFunction(
      ([id, source]) =>
        new RegExp(source).test(
          (globalThis as unknown as PageGlobal).document.querySelector(`[data-status-id="${id}"]`)
            ?.className ?? '',
        ),
      [statusId, expected.source] as const,
      WAIT,
    )
    .catch(waitingFor(`the tile ${statusId} to have a class matching ${expected}`))

/** Counts the EventSources the page opens (before its script runs). */
const countEventSources = (page: Page) =>
  page.addInitScript(() => {
    const g = globalThis as unknown as {
      EventSource: new (url: string) => object
      __sources: number
    }
    const Original = g.EventSource
    g.__sources = 0
    g.EventSource = class extends (Original as unknown as { new (url: string): object }) {
      constructor(url: string) {
        super(url)
        g.__sources++
      }
    } as unknown as typeof g.EventSource
  })

async function makeBoard(t: TestApp, owner: TestUser, statusIds: string[]) {
  const res = await t.request(owner, 'POST', '/v1/boards', {
    name: 'Second floor',
    statusIds,
    accessType: 'public',
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as { id: string; shareId: string }
}

/** Nothing scrolls, and every tile lies inside the window. */
async function assertFits(page: Page, tiles: number, what: string) {
  const facts = await page.evaluate(() => {
    const g = globalThis as unknown as PageGlobal
    const root = g.document.documentElement
    const rects = Array.from(g.document.querySelectorAll('.tile')).map((el) =>
      el.getBoundingClientRect(),
    )
    return {
      scroll: [root.scrollWidth, root.scrollHeight, root.clientWidth, root.clientHeight],
      viewport: [g.innerWidth, g.innerHeight],
      outside: rects.filter(
        (r) =>
          r.left < 0 || r.top < 0 || r.right > g.innerWidth + 0.5 || r.bottom > g.innerHeight + 0.5,
      ).length,
      smallest: Math.min(...rects.map((r) => Math.min(r.width, r.height))),
      count: rects.length,
      valuesOverflowing: Array.from(g.document.querySelectorAll('.tile .value')).filter(
        (v) => v.scrollWidth > (v.getBoundingClientRect().width || 0) + 1,
      ).length,
    }
  })
  assert.equal(facts.count, tiles, `${what}: tiles`)
  const [sw, sh, cw, ch] = facts.scroll as [number, number, number, number]
  assert.ok(sw <= cw && sh <= ch, `${what}: no scrolling (${sw}×${sh} in ${cw}×${ch})`)
  assert.equal(facts.outside, 0, `${what}: every tile on the screen`)
  assert.ok(facts.smallest > 20, `${what}: tiles of a usable size (${facts.smallest}px)`)
  assert.equal(facts.valuesOverflowing, 0, `${what}: every value fits its tile`)
}

describe('the wall page in real Chromium', { skip: chromiumMissing(), timeout: 240_000 }, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  it("its Content Security Policy is the share page's", () => assert.equal(WALL_CSP, PAGE_CSP))

  it('tiles update live on a PATCH, all over ONE EventSource; a status made private greys out and comes back live', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const owner = await t.user()
    const ids: string[] = []
    for (let i = 0; i < 8; i++)
      ids.push(
        (
          await createStatus(t, owner, `room-${i}`, {
            value: 'FREE',
            colorNo: 3,
            accessType: 'public',
          })
        ).id,
      )
    const board = await makeBoard(t, owner, ids)
    const page = await browser.context.newPage()
    const problems: string[] = []
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`)
    })
    await countEventSources(page)
    const res = await page.goto(`${base}/b/${board.shareId}`)
    assert.equal(res?.status(), 200)
    assert.equal(res?.headers()['content-security-policy'], PAGE_CSP)
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobal).__sources === 1,
      null,
      WAIT,
    )
    const [first, last] = [ids[0] as string, ids[7] as string]

    await t.request(owner, 'PATCH', `/v1/status/${last}`, { value: 'OCCUPIED', colorNo: 2 })
    await tileText(page, last, '.value', 'OCCUPIED')
    await tileClass(page, last, /\bc2\b/)
    await t.request(owner, 'PATCH', `/v1/status/${first}`, { value: 'AWAY' })
    await tileText(page, first, '.value', 'AWAY')

    await t.request(owner, 'PATCH', `/v1/status/${first}`, { accessType: 'private' })
    await tileClass(page, first, /\boff\b/)
    await tileText(page, first, '.name', 'Not available')
    // the tile says why, in general terms (nothing of the status itself)
    await tileText(page, first, '.why:not([hidden])', 'private or deleted')
    await t.request(owner, 'PATCH', `/v1/status/${first}`, { value: 'BACK' })
    await t.request(owner, 'PATCH', `/v1/status/${first}`, { accessType: 'public' })
    await tileText(page, first, '.value', 'BACK')
    await tileClass(page, first, /\bc3\b/)
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as PageGlobal).__sources),
      1,
      'one stream the whole time: no reload, no second connection',
    )
    assert.deepEqual(problems, [])
  })

  it('a stale status’s tile turns grey and says "stale", live and when the page is loaded; a new value brings its colour back', async (ctx) => {
    const clock = testClock()
    const t = await makeApp(ctx, { deps: { clock } })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const owner = await t.user()
    const quiet = await createStatus(t, owner, 'sensor', {
      name: 'Sensor',
      value: 'OK',
      colorNo: 3,
      accessType: 'public',
      staleAfter: 60,
    })
    const other = await createStatus(t, owner, 'door', {
      name: 'Door',
      value: 'OPEN',
      colorNo: 3,
      accessType: 'public',
    })
    const board = await makeBoard(t, owner, [quiet.id, other.id])
    const page = await browser.context.newPage()
    ctx.after(() => page.close())
    await page.goto(`${base}/b/${board.shareId}`)
    await tileClass(page, quiet.id, /^tile c3$/)
    await page.locator(`[data-status-id="${quiet.id}"] .stale`).waitFor({ state: 'hidden' })

    // the silence passes: the stream says so, and the tile goes grey with its mark
    clock.advance(61_000)
    assert.equal(await t.app.staleDetector.runOnce(), 1)
    await tileClass(page, quiet.id, /^tile c11 stale$/)
    await page.locator(`[data-status-id="${quiet.id}"] .stale`).waitFor({ state: 'visible' })
    await tileClass(page, other.id, /^tile c3$/)

    // the page as served is already grey for it
    const served = await (await fetch(`${base}/b/${board.shareId}`)).text()
    assert.match(served, new RegExp(`class="tile c11 stale" data-status-id="${quiet.id}"`))
    await page.reload()
    await tileClass(page, quiet.id, /^tile c11 stale$/)
    await page.locator(`[data-status-id="${quiet.id}"] .stale`).waitFor({ state: 'visible' })
    await t.request(owner, 'PATCH', `/v1/status/${other.id}`, { accessType: 'private' })
    await tileClass(page, other.id, /\boff\b/)
    await expectNoAxeViolations(page, 'a wall with a stale tile and a private one')
    await t.request(owner, 'PATCH', `/v1/status/${other.id}`, { accessType: 'public' })

    // a new value ends the silence: its colour again
    await t.request(owner, 'PATCH', `/v1/status/${quiet.id}`, { value: 'OK' })
    await tileClass(page, quiet.id, /^tile c3$/)
    await page.locator(`[data-status-id="${quiet.id}"] .stale`).waitFor({ state: 'hidden' })
  })

  it('no scrollbars: 100 statuses at 1920×1080, 12 at 375×667; the values fit their tiles', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const owner = await t.user()
    const ids: string[] = []
    for (let i = 0; i < 100; i++)
      ids.push(
        (
          await createStatus(t, owner, `desk-${i}`, {
            name: `Desk ${i} by the long window on the east side`.slice(0, 42),
            value: i % 3 === 0 ? 'OCCUPIED' : i % 3 === 1 ? 'FREE' : 'WWWWWWWWWW',
            accessType: 'public',
          })
        ).id,
      )
    const wall = await makeBoard(t, owner, ids)
    const phone = await makeBoard(t, owner, ids.slice(0, 12))
    const page = await browser.context.newPage()
    await page.setViewportSize({ width: 1920, height: 1080 })
    await page.goto(`${base}/b/${wall.shareId}`)
    await page.waitForSelector('.tiles.fitted', WAIT)
    await assertFits(page, 100, '100 tiles at 1920×1080')
    await page.setViewportSize({ width: 375, height: 667 })
    await page.goto(`${base}/b/${phone.shareId}`)
    await page.waitForSelector('.tiles.fitted', WAIT)
    await assertFits(page, 12, '12 tiles at 375×667')
    // turned on its side: fitted again
    await page.setViewportSize({ width: 667, height: 375 })
    await page.waitForFunction(
      () => {
        const g = globalThis as unknown as PageGlobal
        return g.document.documentElement.scrollHeight <= g.innerHeight
      },
      null,
      WAIT,
    )
    await assertFits(page, 12, '12 tiles at 667×375')
  })

  it('survives a server restart: "reconnecting", then live again without a reload', async (ctx) => {
    // note: removed after both apps have closed (defer: last registered, first undone); removed
    // first, it was gone under the open database, whose checkpoint thread then failed
    const dir = tempDir(ctx, 'statusd-wall-')
    // one database both servers use, as a restarted process would
    const databaseUrl =
      TEST_ENGINE === 'sqlite' ? `sqlite:${join(dir, 'statusd.db')}` : (await testDatabase(ctx)).url
    const first = await makeApp(ctx, { databaseUrl })
    await first.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = first.app.server.address() as AddressInfo
    const base = `http://127.0.0.1:${port}`
    const owner = await first.user()
    const s = await createStatus(first, owner, 'room-1', { value: 'FREE', accessType: 'public' })
    const board = await makeBoard(first, owner, [s.id])
    const page = await browser.context.newPage()
    let loads = 0
    page.on('load', () => loads++)
    await page.goto(`${base}/b/${board.shareId}`)
    await tileText(page, s.id, '.value', 'FREE')

    await bounded('the first server to close, with the page on its stream', first.close())
    await page
      .waitForFunction(
        () =>
          /Reconnecting/.test(
            (globalThis as unknown as PageGlobal).document.querySelector('.connection')
              ?.textContent ?? '',
          ),
        null,
        WAIT,
      )
      .catch(waitingFor('the page to say "Reconnecting" once its server closed'))
    const second = await bounded('a second app on the same database', makeApp(ctx, { databaseUrl }))
    await bounded(
      'the second app to listen on the same port',
      second.app.listen({ port, host: '127.0.0.1' }),
    )
    // a write on the new server reaches the page: it found its way back on its own
    await bounded(
      'the PATCH on the second app',
      second.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' }),
    )
    await tileText(page, s.id, '.value', 'BUSY')
    await page
      .waitForFunction(
        () =>
          (globalThis as unknown as PageGlobal).document.querySelector('.connection')
            ?.textContent === '',
        null,
        { timeout: 60_000 },
      )
      .catch(waitingFor('the page to say it is connected again'))
    assert.equal(loads, 1, 'no reload')
  })

  it('hostile names and values render as text: markup, right-to-left, zero-width', async (ctx: Lifetime) => {
    const { t, base } = await listeningApp(ctx)
    const owner = await t.user()
    const names = [
      '<img src=x onerror="window.__pwned=1">',
      '\u202eevil\u202c right-to-left',
      'zero\u200bwidth\u200dname',
    ]
    const ids: string[] = []
    for (const [i, name] of names.entries())
      ids.push(
        (await createStatus(t, owner, `h-${i}`, { name, value: '<b>x</b>', accessType: 'public' }))
          .id,
      )
    const board = await t.request(owner, 'POST', '/v1/boards', {
      name: '<script>window.__pwned=1</script>',
      statusIds: ids,
      accessType: 'public',
    })
    const page = await browser.context.newPage()
    await page.goto(`${base}/b/${board.json().shareId}`)
    for (const [i, name] of names.entries()) await tileText(page, ids[i] as string, '.name', name)
    // and live: a new hostile value arrives as text too
    await t.request(owner, 'PATCH', `/v1/status/${ids[0]}`, { value: '<i>y</i>' })
    await tileText(page, ids[0] as string, '.value', '<i>y</i>')
    const facts = await page.evaluate(() => {
      const g = globalThis as unknown as PageGlobal & { __pwned?: number }
      return {
        pwned: g.__pwned,
        injected: g.document.querySelectorAll('.tiles img, .tiles b, .tiles i, main script').length,
        title: g.document.querySelector('h1')?.textContent,
      }
    })
    assert.deepEqual(facts, {
      pwned: undefined,
      injected: 0,
      title: '<script>window.__pwned=1</script>',
    })
    await assertFits(page, 3, 'hostile names do not break the layout')
  })

  it('an unknown or private wall is a 404 page, not JSON', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const owner = await t.user()
    const s = await createStatus(t, owner, 'room-1', { value: 'FREE' })
    const board = (
      await t.request(owner, 'POST', '/v1/boards', { name: 'Private', statusIds: [s.id] })
    ).json()
    for (const shareId of ['aaaaaaaa', board.shareId]) {
      const res = await fetch(`${base}/b/${shareId}`)
      assert.equal(res.status, 404)
      assert.match(String(res.headers.get('content-type')), /^text\/html/)
      assert.match(await res.text(), /Wall not found/)
    }
  })
})
