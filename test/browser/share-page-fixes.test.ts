import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'
import { createStatus, makeCast } from '../helpers/sharing.ts'

// docs/sharing.md#share-page-and-badge: the share page comes back after its status was private
// for a while, keeps a value on one line, and says when it changed in relative words.

// note: bounds for waiting, not timing assertions; a broken page fails instead of hanging
const WAIT = { timeout: 20_000 }

/** The page's globals, typed just enough: the project's types are Node's, not the DOM's. */
type El = {
  textContent: string | null
  hidden: boolean
  title: string
  dataset: Record<string, string>
  getClientRects(): { length: number }
  getBoundingClientRect(): { left: number; right: number; top: number; bottom: number }
}
type PageGlobal = {
  document: { querySelector(s: string): El | null; documentElement: { scrollWidth: number } }
  innerWidth: number
  __delays: number[]
  __views: number
}

// note: functions, not strings: Playwright evaluates a string predicate with eval, which the
// page's CSP (rightly) forbids
const waitForText = (page: Page, selector: string, expected: string) =>
  page.waitForFunction(
    ([sel, want]) =>
      (globalThis as unknown as PageGlobal).document.querySelector(sel)?.textContent === want,
    [selector, expected] as const,
    WAIT,
  )
const waitForState = (page: Page, state: string) =>
  page.waitForSelector(`#live[data-state="${state}"]`, WAIT)

describe('share page fixes in real Chromium', { skip: chromiumMissing(), timeout: 180_000 }, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  it('made private then public again: the page says "not available right now", then comes back live without a reload', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-7', { value: 'FREE', accessType: 'public' })
    const page = await browser.context.newPage()
    const problems: string[] = []
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
    let loads = 0
    page.on('load', () => loads++)
    await page.goto(`${base}/s/${s.shareId}`)
    await waitForState(page, 'live')

    const hidden = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'private' })
    assert.equal(hidden.statusCode, 200)
    await waitForState(page, 'unavailable')
    assert.equal(await page.textContent('#live'), 'Not available')
    assert.match(String(await page.textContent('#gone')), /not available right now/)
    assert.equal(await page.isVisible('#gone'), true)

    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'public' })
    await waitForState(page, 'live')
    assert.equal(await page.isVisible('#gone'), false, 'the note goes once it is back')
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    await waitForText(page, '#value', 'BUSY')
    assert.equal(loads, 1, 'no reload')
    assert.deepEqual(problems, [])
    await page.close()
  })

  it('while not available it asks again after 1, 2, 4, 8, 16, then every 30 s; at once when back online or shown again', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-8', { value: 'FREE', accessType: 'public' })
    const page = await browser.context.newPage()
    // the page's timers on a clock the test moves; every pause the page asks for is recorded,
    // and every time it asks the share view
    await page.clock.install()
    await page.clock.pauseAt(Date.now() + 1000)
    await page.addInitScript(() => {
      const w = globalThis as unknown as PageGlobal & {
        setTimeout: (f: () => void, ms: number) => unknown
        fetch: (url: string, init?: unknown) => Promise<unknown>
      }
      w.__delays = []
      w.__views = 0
      const setTimer = w.setTimeout.bind(w)
      w.setTimeout = (f, ms) => {
        w.__delays.push(ms)
        return setTimer(f, ms)
      }
      const fetch = w.fetch.bind(w)
      w.fetch = (url, init) => {
        if (!String(url).includes('/history')) w.__views++
        return fetch(url, init)
      }
    })
    await page.goto(`${base}/s/${s.shareId}`)
    await waitForState(page, 'live')
    const delays = () => page.evaluate(() => (globalThis as unknown as PageGlobal).__delays)
    const views = () => page.evaluate(() => (globalThis as unknown as PageGlobal).__views)
    const waitForDelays = (n: number) =>
      page.waitForFunction(
        (count) => (globalThis as unknown as PageGlobal).__delays.length === count,
        n,
        WAIT,
      )

    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'private' })
    await waitForState(page, 'unavailable')
    await waitForDelays(1)
    for (let n = 1; n <= 7; n++) {
      const [pause] = (await delays()).slice(-1) as [number]
      await page.clock.runFor(pause)
      await waitForDelays(n + 1) // asked, got its 404, and waits again
    }
    assert.deepEqual(await delays(), [1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000])
    assert.equal(await views(), 7)
    assert.equal(await page.textContent('#live'), 'Not available')

    // back online: no need to wait out the 30 s
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'public' })
    await page.evaluate(() =>
      (globalThis as unknown as EventTarget).dispatchEvent(new Event('online')),
    )
    await waitForState(page, 'live')
    assert.equal(await views(), 8)

    // private again; the tab shown again asks at once too
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'private' })
    await waitForState(page, 'unavailable')
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { accessType: 'public', value: 'BACK' })
    await page.evaluate(() =>
      (globalThis as unknown as { document: EventTarget }).document.dispatchEvent(
        new Event('visibilitychange'),
      ),
    )
    await waitForState(page, 'live')
    await waitForText(page, '#value', 'BACK')
    await page.close()
  })

  it('a deleted status: the page says so and stops asking', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-9', { value: 'FREE', accessType: 'public' })
    const page = await browser.context.newPage()
    await page.goto(`${base}/s/${s.shareId}`)
    await waitForState(page, 'live')
    await t.request(owner, 'DELETE', `/v1/status/${s.id}`)
    await waitForState(page, 'offline')
    assert.match(String(await page.textContent('#gone')), /was deleted/)
    await page.close()
  })

  for (const width of [250, 320]) {
    it(`at ${width} px wide each value stays on one line, whole, inside the viewport`, async (ctx) => {
      const { t, base } = await listeningApp(ctx)
      const { owner } = await makeCast(t)
      const s = await createStatus(t, owner, `fit-${width}`, {
        name: 'Meeting room 4',
        value: 'OCCUPIED',
        accessType: 'public',
      })
      const page = await browser.context.newPage()
      await page.setViewportSize({ width, height: 700 })
      await page.goto(`${base}/s/${s.shareId}`)
      await waitForState(page, 'live')
      const values = [
        'OCCUPIED',
        'FREE',
        'WWWWWWWWWW',
        '会議室は使用中です満',
        '🚪🔒🟥✅🎉🚪🔒🟥✅🎉',
        'ﷺﷺﷺﷺﷺﷺﷺﷺﷺﷺ',
      ]
      for (const value of values) {
        await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value })
        await waitForText(page, '#value', value)
        const m = await page.evaluate(() => {
          const w = globalThis as unknown as PageGlobal
          const text = w.document.querySelector('#value-text') as El
          const box = (w.document.querySelector('#value') as El).getBoundingClientRect()
          const r = text.getBoundingClientRect()
          return {
            lines: text.getClientRects().length,
            left: r.left,
            right: r.right,
            boxLeft: box.left,
            boxRight: box.right,
            viewport: w.innerWidth,
            scrollWidth: w.document.documentElement.scrollWidth,
          }
        })
        const where = `${value} at ${width} px: ${JSON.stringify(m)}`
        assert.equal(m.lines, 1, `one line: ${where}`)
        assert.ok(m.left >= m.boxLeft && m.right <= m.boxRight, `inside its box: ${where}`)
        assert.ok(m.left >= 0 && m.right <= m.viewport, `inside the viewport: ${where}`)
        assert.ok(m.scrollWidth <= m.viewport, `no sideways scrolling: ${where}`)
      }
      await page.close()
    })
  }

  it('says when the value changed in relative words ("5 minutes ago", "yesterday"), the exact time in its title, refreshed every minute', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-10', { value: 'FREE', accessType: 'public' })
    const changed = Date.parse(s.valueUpdatedAt as string)
    const page = await browser.context.newPage()
    await page.clock.install({ time: changed + 5 * 60_000 + 10_000 })
    await page.clock.pauseAt(changed + 5 * 60_000 + 10_000)
    await page.goto(`${base}/s/${s.shareId}`)
    await waitForState(page, 'live')
    const time = '#changed time'
    assert.equal(await page.textContent(time), '5 minutes ago')
    assert.equal(await page.getAttribute(time, 'datetime'), s.valueUpdatedAt)
    // the exact time in the viewer's zone and language (the browser: en-GB, UTC)
    assert.match(String(await page.getAttribute(time, 'title')), /^\d{1,2} \w{3} \d{4}, \d\d:\d\d$/)
    await page.clock.runFor(60_000)
    await waitForText(page, time, '6 minutes ago')
    await page.clock.runFor(24 * 3600_000)
    await waitForText(page, time, 'yesterday')
    await page.close()
  })
})
