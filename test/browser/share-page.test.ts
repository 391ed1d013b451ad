import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { BrowserContext, Page } from 'playwright-core'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'
import { createStatus, makeCast } from '../helpers/sharing.ts'

// note: bounds for waiting, not timing assertions; a broken page fails instead of hanging
const WAIT = { timeout: 15_000 }

/** Opens a page and collects what must never happen: console errors (CSP), dialogs, reloads. */
async function open(context: BrowserContext, url: string) {
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`)
  })
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
  page.on('dialog', async (dialog) => {
    problems.push(`dialog: ${dialog.message()}`)
    await dialog.dismiss()
  })
  let loads = 0
  page.on('load', () => loads++)
  await page.goto(url)
  await page.waitForSelector('#live[data-state="live"]', WAIT) // the event stream is open
  return { page, problems, loads: () => loads }
}

const text = (page: Page, selector: string) => page.$eval(selector, (el) => el.textContent ?? '')

/** The page's document, typed just enough: the project's types are Node's, not the DOM's. */
type PageGlobal = { document: { querySelector(s: string): { textContent: string | null } | null } }

// note: a function, not a string: Playwright evaluates a string predicate with eval, which
// the page's CSP (rightly) forbids
const waitForText = (page: Page, selector: string, expected: string) =>
  page.waitForFunction(
    ([sel, want]) =>
      (globalThis as unknown as PageGlobal).document.querySelector(sel)?.textContent === want,
    [selector, expected] as const,
    WAIT,
  )

describe('share page in real Chromium', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  it('shows a value set through the API without a reload', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-4', {
      name: 'Meeting room 4',
      value: 'FREE',
      colorNo: 3,
      accessType: 'public',
      accessTypeHistory: 'public',
    })
    const { page, problems, loads } = await open(browser.context, `${base}/s/${s.shareId}`)
    assert.equal(await text(page, '#value'), 'FREE')
    await page.evaluate("window.marker = 'same document'")

    const res = await t.request(owner, 'PATCH', `/v1/status/${s.id}`, {
      value: 'OCCUPIED',
      colorNo: 2,
    })
    assert.equal(res.statusCode, 200)

    await waitForText(page, '#value', 'OCCUPIED')
    assert.equal(
      await page.evaluate('window.marker'),
      'same document',
      'no reload: the page state survived',
    )
    assert.equal(loads(), 1)
    assert.equal(
      await page.evaluate("getComputedStyle(document.getElementById('value')).backgroundColor"),
      'rgb(185, 28, 28)',
      'the new colour (2, red) is applied',
    )
    assert.equal(await page.title(), 'Meeting room 4: OCCUPIED')
    await waitForText(page, '#history-list .item-main', 'OCCUPIED')

    await t.request(owner, 'DELETE', `/v1/status/${s.id}`)
    await page.waitForSelector('#gone', { ...WAIT, state: 'visible' })
    assert.deepEqual(problems, [], 'no console errors (CSP violations show there), no dialogs')
    await page.close()
  })

  it('hostile names and descriptions stay text, on load and on live updates', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const hostile = '<script>alert(1)</script>'
    const s = await createStatus(t, owner, 'hostile', {
      name: hostile,
      value: '<b>x</b>',
      accessType: 'public',
      description: '"><img src=x onerror=alert(2)> javascript:alert(3) https://ok.example.com',
    })
    const { page, problems } = await open(browser.context, `${base}/s/${s.shareId}`)
    assert.equal(await text(page, '#name'), hostile)
    assert.equal(await text(page, '#value'), '<b>x</b>')
    assert.equal(await page.$$eval('img, svg, b, script:not([src])', (els) => els.length), 0)
    assert.deepEqual(
      await page.$$eval('#description a', (as) => as.map((a) => a.getAttribute('href'))),
      ['https://ok.example.com'],
    )

    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, {
      name: '"><svg onload=alert(4)>',
      description: '<img src=y onerror=alert(5)> see javascript:alert(6)',
    })
    await waitForText(page, '#name', '"><svg onload=alert(4)>')
    assert.equal(
      await text(page, '#description'),
      '<img src=y onerror=alert(5)> see javascript:alert(6)',
    )
    assert.equal(await page.$$eval('img, svg, b, script:not([src])', (els) => els.length), 0)
    assert.equal(await page.$$eval('#description a', (as) => as.length), 0)
    assert.deepEqual(problems, [], 'no script ran: no dialog, no error')
    await page.close()
  })

  it("a stream refused with other than 200 (a proxy's 502 in a restart): the page tries again and catches up", async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-5', { value: 'FREE', accessType: 'public' })
    const page = await browser.context.newPage()
    // the first stream gets a 502 from "the proxy", as while the server restarts; an
    // EventSource gives up for good on such an answer
    let refused = 0
    await page.route('**/events', async (route) => {
      if (refused++ === 0) await route.fulfill({ status: 502, body: 'Bad Gateway' })
      else await route.continue()
    })
    await page.goto(`${base}/s/${s.shareId}`)
    await page.waitForSelector('#live[data-state="live"]', WAIT)
    assert.equal(refused, 2, 'refused once, then opened again')
    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'BUSY' })
    await waitForText(page, '#value', 'BUSY')
    await page.close()
  })

  it('a status deleted while its stream could not connect: the page says sharing ended', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-6', { value: 'FREE', accessType: 'public' })
    const page = await browser.context.newPage()
    await page.route('**/events', (route) => route.fulfill({ status: 502, body: 'Bad Gateway' }))
    await page.goto(`${base}/s/${s.shareId}`)
    assert.equal((await t.request(owner, 'DELETE', `/v1/status/${s.id}`)).statusCode, 204)
    await page.waitForSelector('#gone', { ...WAIT, state: 'visible' })
    assert.equal(await page.getAttribute('#gone', 'role'), 'status', 'announced to screen readers')
    await page.close()
  })

  it('the not-found page runs no live-update code: no stream, no script error', async (ctx) => {
    const { base } = await listeningApp(ctx)
    const page = await browser.context.newPage()
    const problems: string[] = []
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
    page.on('request', (req) => {
      if (req.url().includes('undefined')) problems.push(`request: ${req.url()}`)
    })
    const res = await page.goto(`${base}/s/zzzzzzzz`)
    assert.equal(res?.status(), 404)
    await page.waitForLoadState('networkidle')
    assert.deepEqual(problems, [])
    await page.close()
  })
})
