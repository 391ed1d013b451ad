import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'

// note: bounds for waiting, not timing assertions; a broken page fails instead of hanging
const WAIT = { timeout: 30_000 }

// The API explorer at /docs (Swagger UI) renders under its Content-Security-Policy (hardening
// finding 12: /docs sent none): the reference shows every operation, nothing is refused.
describe('/docs in real Chromium', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  it('/docs sends no CSP/frame-ancestors: the explorer renders under its policy, with no violation', async (ctx) => {
    const { base } = await listeningApp(ctx)
    const page = await browser.context.newPage()
    const problems: string[] = []
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`)
    })
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
    const res = await page.goto(`${base}/docs`)
    assert.match(String(res?.headers()['content-security-policy']), /frame-ancestors 'none'/)
    await page.waitForSelector('.swagger-ui .info .title', WAIT)
    assert.match(
      await page.$eval('.swagger-ui .info .title', (el) => el.textContent ?? ''),
      /statusd/,
    )
    await page.waitForSelector('.opblock', WAIT)
    assert.ok((await page.$$('.opblock')).length > 10, 'the operations are listed')
    // one operation tried out: the request goes to this origin and its answer shows
    const op = '#operations-operations-checkLiveness'
    await page.click(`${op} .opblock-summary`)
    await page.click(`${op} .try-out__btn`, WAIT)
    await page.click(`${op} .execute`, WAIT)
    await page.waitForSelector(`${op} .live-responses-table tr.response .response-col_status`, WAIT)
    assert.match(
      await page.$eval(
        `${op} .live-responses-table tr.response .response-col_status`,
        (el) => el.textContent ?? '',
      ),
      /200/,
    )
    assert.deepEqual(problems, [])
  })
})
