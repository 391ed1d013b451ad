import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { BrowserContext, Page } from 'playwright-core'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'

// note: bounds for waiting, not timing assertions; a broken page fails instead of hanging
const WAIT = { timeout: 30_000 }

// The API explorer at /docs (Swagger UI) renders under its Content-Security-Policy (hardening
// finding 12: /docs sent none): the reference shows every operation, nothing is refused.
describe('/docs in real Chromium', { skip: chromiumMissing(), timeout: 1_200_000 }, () => {
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
    // the body's example is the schema's own (docs/api.md#api-reference-page), not text made
    // up from the name's pattern
    const signUp = '#operations-accounts-signUp'
    await page.click(`${signUp} .opblock-summary-control`)
    await page.waitForSelector(`${signUp} .opblock-section-request-body .highlight-code`, WAIT)
    assert.deepEqual(
      JSON.parse(
        await page.$eval(
          `${signUp} .opblock-section-request-body .highlight-code`,
          (el) => el.textContent ?? '',
        ),
      ),
      { email: 'ada@example.com', name: 'Ada Lovelace', password: 'analytical engine notes' },
    )
    assert.deepEqual(problems, [])
  })

  // docs/api.md#api-reference-page: the reference is statusd's, accessible, and self-contained
  for (const colorScheme of ['light', 'dark'] as const)
    it(`${colorScheme}: statusd's name and logo, every request to this server, no axe violation at 375 and 1280 px, operations closed and open`, async (ctx) => {
      const { base } = await listeningApp(ctx)
      // a hostname that is not localhost: Swagger UI shows its validator badge (an image from
      // validator.swagger.io) only for such documents, so this would catch it coming back
      const port = new URL(base).port
      const origin = `http://statusd.test:${port}`
      const own = await launchChromium({
        colorScheme,
        args: ['--host-resolver-rules=MAP statusd.test 127.0.0.1'],
      })
      ctx.after(() => own.close())
      const elsewhere = await watchRequests(own.context, origin)
      for (const width of [375, 1280]) {
        const page = await own.context.newPage()
        await page.setViewportSize({ width, height: 900 })
        const problems: string[] = []
        page.on('console', (msg) => {
          if (msg.type() === 'error') problems.push(`console: ${msg.text()}`)
        })
        await page.goto(`${origin}/docs`)
        await page.waitForSelector('.opblock', WAIT)
        const label = `/docs, ${colorScheme}, ${width} px`

        assert.equal(await page.title(), 'statusd API reference')
        assert.equal(await page.textContent('header h1'), 'statusd API reference')
        assert.equal(await page.getAttribute('header h1 a', 'href'), '/')
        const logo = await page.$eval('header img', (img) => ({
          src: (img as unknown as { src: string }).src,
          loaded: (img as unknown as { naturalWidth: number }).naturalWidth > 0,
        }))
        assert.deepEqual(logo, { src: `${origin}/docs/static/theme/logo.svg`, loaded: true })
        assert.equal(
          await page.getAttribute('link[rel="icon"]', 'href'),
          '/docs/static/theme/logo.svg',
        )
        assert.equal(await page.$$eval('.topbar', (els) => els.length), 0, 'no Swagger top bar')
        assert.equal(
          await page.$$eval('main #swagger-ui', (els) => els.length),
          1,
          'in a main landmark',
        )
        assert.equal(
          await page.$eval('html', (el) => el.classList.contains('dark-mode')),
          colorScheme === 'dark',
          "Swagger UI's own dark theme follows the system",
        )
        await expectNoAxeViolations(page, `${label}, operations closed`)

        await openOperations(page)
        await expectNoAxeViolations(page, `${label}, operations open`)
        assert.deepEqual(problems, [], label)
        await page.close()
      }
      assert.deepEqual(elsewhere, [], 'no request leaves the server')
    })
})

/** Every request the browser makes to another origin (each is refused, not sent). */
async function watchRequests(context: BrowserContext, origin: string): Promise<string[]> {
  const elsewhere: string[] = []
  await context.route('**/*', async (route) => {
    const url = route.request().url()
    if (new URL(url).origin === origin) return route.continue()
    elsewhere.push(url)
    return route.abort()
  })
  return elsewhere
}

/** An operation with a body opened for trying out, and one tried, so their parts are checked. */
async function openOperations(page: Page): Promise<void> {
  const update = '#operations-statuses-updateStatus'
  await page.click(`${update} .opblock-summary-control`)
  await page.click(`${update} .try-out__btn`, WAIT)
  // a required parameter left empty: the UI marks it instead of sending
  await page.click(`${update} .execute`, WAIT)
  const liveness = '#operations-operations-checkLiveness'
  await page.click(`${liveness} .opblock-summary-control`)
  await page.click(`${liveness} .try-out__btn`, WAIT)
  await page.click(`${liveness} .execute`, WAIT)
  await page.waitForSelector(`${liveness} .live-responses-table`, WAIT)
}
