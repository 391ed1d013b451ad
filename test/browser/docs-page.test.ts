import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { BrowserContext } from 'playwright-core'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'

// The API reference at /docs (docs/api.md#api-reference-page), in real Chromium: the OpenAPI
// document as a plain page under its Content-Security-Policy (no script at all), every
// operation listed, an operation opened as a reader opens it, its example the schema's own,
// nothing from elsewhere, accessible light and dark, on a phone and a desktop, and no layout
// shift as it loads.

interface Doc {
  info: { title: string }
  paths: Record<string, Record<string, { operationId: string }>>
}

describe('/docs in real Chromium', { skip: chromiumMissing(), timeout: 600_000 }, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  it('lists every operation of the document under its CSP (no script, never framed); an opened one shows its example body and a curl line', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const doc = (await t.request(null, 'GET', '/docs/json')).json() as Doc
    const page = await browser.context.newPage()
    ctx.after(() => page.close())
    const problems: string[] = []
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`)
    })
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`))
    const res = await page.goto(`${base}/docs`)
    const csp = String(res?.headers()['content-security-policy'])
    assert.match(csp, /frame-ancestors 'none'/)
    assert.doesNotMatch(csp, /script-src/, 'no script may run: default-src none covers it')
    assert.equal(await page.locator('script').count(), 0)
    assert.equal(await page.title(), 'statusd API reference')
    assert.ok(
      ((await page.getAttribute('meta[name="description"]', 'content')) ?? '').length > 50,
      'a meta description',
    )

    const ids = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    )
    assert.ok(ids.length > 50)
    for (const id of ids) assert.equal(await page.locator(`details[id="${id}"]`).count(), 1, id)

    // the reader opens "sign up": the body's example is the schema's own
    const signUp = page.locator('details#signUp')
    await signUp.locator('summary').click()
    const example = signUp.locator('pre').first()
    await example.waitFor()
    assert.deepEqual(JSON.parse((await example.textContent()) ?? ''), {
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      password: 'analytical engine notes',
    })
    const curl = (await signUp.locator('pre').last().textContent()) ?? ''
    assert.match(curl, /^curl -s -X POST "\$BASE\/v1\/auth\/signup"/)
    assert.match(curl, /-d '\{"email":"ada@example.com"/)
    // a type named in it leads to its schema
    await page.locator('details#updateStatus summary').click()
    await page.locator('details#updateStatus a[href="#schema-StatusInput"]').first().click()
    await page.waitForURL((url) => url.hash === '#schema-StatusInput')
    assert.equal(await page.evaluate("document.querySelector(':target').id"), 'schema-StatusInput')
    assert.deepEqual(problems, [])
  })

  for (const colorScheme of ['light', 'dark'] as const)
    it(`${colorScheme}: nothing from elsewhere, nothing wider than the screen, no axe violation at 375 and 1280 px with operations open, no layout shift`, async (ctx) => {
      const { base } = await listeningApp(ctx)
      const own = await launchChromium({ colorScheme })
      ctx.after(() => own.close())
      const elsewhere = await watchRequests(own.context, new URL(base).origin)
      for (const width of [375, 1280]) {
        const page = await own.context.newPage()
        await page.setViewportSize({ width, height: 900 })
        // layout shifts from the first paint on, summed as Lighthouse's CLS counts them
        // (those right after input excluded)
        await page.addInitScript(`
          window.__shift = 0
          new PerformanceObserver((list) => {
            for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shift += e.value
          }).observe({ type: 'layout-shift', buffered: true })
        `)
        await page.goto(`${base}/docs`, { waitUntil: 'load' })
        const label = `/docs, ${colorScheme}, ${width} px`
        assert.equal(await page.locator('header h1 a').getAttribute('href'), '/')
        const logo = await page.$eval('header img', (img) => ({
          loaded: (img as unknown as { naturalWidth: number }).naturalWidth > 0,
        }))
        assert.deepEqual(logo, { loaded: true })
        assert.equal(await page.locator('main').count(), 1, 'a main landmark')
        assert.ok(
          Number(await page.evaluate('window.__shift')) <= 0.05,
          `${label}: layout shift ${await page.evaluate('window.__shift')}`,
        )
        // note: axe once, with three operations open: the closed page's every element is in it
        for (const id of ['updateStatus', 'signUp', 'checkLiveness'])
          await page.locator(`details[id="${id}"] > summary`).click()
        await page.locator('details#checkLiveness[open]').waitFor()
        const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'))
        assert.ok(scrollWidth <= width, `${label}: ${scrollWidth} px wide`)
        await expectNoAxeViolations(page, `${label}, operations open`)
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
