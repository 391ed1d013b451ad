import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'
import { createStatus } from '../helpers/sharing.ts'

// docs/accounts.md#private-share-links: the page a private share link opens, in real
// Chromium: it shows a private status, follows it live, and says so when the link is revoked.

// note: bounds for waiting, not timing assertions; a broken page fails instead of hanging
const WAIT = { timeout: 15_000 }

type PageGlobal = { document: { querySelector(s: string): { textContent: string | null } | null } }
const waitForText = (page: Page, selector: string, expected: string) =>
  page.waitForFunction(
    ([sel, want]) =>
      (globalThis as unknown as PageGlobal).document.querySelector(sel)?.textContent === want,
    [selector, expected] as const,
    WAIT,
  )

describe('private share link page in real Chromium', {
  skip: chromiumMissing(),
  timeout: 120_000,
}, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  it('shows a private status live, sends no referrer, and shows the end when the link is revoked', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const s = await createStatus(t, owner, 'lab', {
      name: 'Lab door',
      value: 'LOCKED',
      description: 'See https://example.com/lab',
    })
    const made = await t.request(owner, 'POST', `/v1/status/${s.id}/share-links`, {})
    const { id: linkId, url } = made.json() as { id: string; url: string }
    const page = await browser.context.newPage()
    const problems: string[] = []
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`)
    })
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
    await page.goto(`${base}${url}`)
    await page.waitForSelector('#live[data-state="live"]', WAIT)
    assert.equal(await page.$eval('#value', (el) => el.textContent), 'LOCKED')
    // the description's link must not learn the page's URL
    assert.equal(
      await page.$eval('#description a', (el) => el.getAttribute('href')),
      'https://example.com/lab',
    )

    await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value: 'OPEN' })
    await waitForText(page, '#value', 'OPEN')

    const revoked = await t.request(owner, 'DELETE', `/v1/status/${s.id}/share-links/${linkId}`)
    assert.equal(revoked.statusCode, 204)
    await page.waitForSelector('#gone:not([hidden])', WAIT)
    assert.equal(await page.$eval('#live', (el) => el.getAttribute('data-state')), 'offline')
    assert.deepEqual(problems, [])

    // following the description's link tells the other site nothing of the page's URL
    let referer: string | undefined = 'not asked'
    await page.route('https://example.com/**', async (route) => {
      referer = route.request().headers().referer
      await route.fulfill({ body: 'elsewhere', contentType: 'text/plain' })
    })
    await page.click('#description a')
    await page.waitForURL('https://example.com/lab', WAIT)
    assert.equal(referer, undefined, 'no Referer header')
  })
})
