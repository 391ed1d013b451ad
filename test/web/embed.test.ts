import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import type { Page } from 'playwright-core'
import { appServer, expectScreen, openApp, signUpPerson } from '../helpers/app-browser.ts'
import { makeStatus } from '../helpers/app-statuses.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { createStatus } from '../helpers/sharing.ts'

// docs/sharing.md#embeds: another site's page loads /embed.js from statusd and shows a status
// with <statusd-status>: its value, live, from statusd alone, under the page's own strict CSP.

const skip = chromiumMissing()

/**
 * Another origin (a second HTTP server on another port) serving one page that embeds the
 * element, under a CSP that lets nothing but statusd's script and stream in.
 */
async function otherSite(
  ctx: Lifetime,
  statusd: string,
  snippet: string,
  lang = 'en',
): Promise<string> {
  const page = `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><title>Our office</title></head>
<body><main><h1>Our office</h1><p>Room 4: ${snippet}</p></main></body></html>`
  const server = createServer((request, response) => {
    if (request.url !== '/') return response.writeHead(404).end()
    response
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': `default-src 'none'; script-src ${statusd}; connect-src ${statusd}`,
      })
      .end(page)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  ctx.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** The snippet as docs/sharing.md#embeds gives it. */
const snippet = (statusd: string, attribute: 'share' | 'link', id: string) =>
  `<script type="module" src="${statusd}/embed.js"></script><statusd-status ${attribute}="${id}"></statusd-status>`

/** Records every request the page makes and every console error (CSP violations included). */
function watch(page: Page, site: string) {
  const requests: string[] = []
  const errors: string[] = []
  page.on('request', (request) => requests.push(request.url()))
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  return {
    errors,
    /** How many streams the page opened. */
    streams: () => requests.filter((url) => url.endsWith('/events')).length,
    /** The origins asked, the page's own left out. */
    origins: () =>
      [...new Set(requests.map((url) => new URL(url).origin))].filter((o) => o !== site),
  }
}

/** Waits until the element's value (in its shadow root, which locators pierce) reads `text`. */
const valueReads = (page: Page, text: string) =>
  page
    .locator('statusd-status [part=value]')
    .filter({ hasText: new RegExp(`^${text}$`) })
    .waitFor()

const hostBackground = (page: Page) =>
  page.evaluate("getComputedStyle(document.querySelector('statusd-status')).backgroundColor")

describe('the embed on another site’s page', { skip }, () => {
  it('shows a public status’s name and value, a change arrives live, and only statusd is asked', async (t) => {
    const { t: app, base } = await listeningApp(t)
    const owner = await app.user()
    const status = await createStatus(app, owner, 'room-4', {
      name: 'Meeting room 4',
      value: 'FREE',
      colorNo: 3,
      accessType: 'public',
    })
    const site = await otherSite(t, base, snippet(base, 'share', status.shareId))
    const browser = await launchChromium({ colorScheme: 'dark' })
    t.after(browser.close)
    const page = await browser.context.newPage()
    const seen = watch(page, site)
    await page.goto(site)
    await valueReads(page, 'FREE')
    assert.equal(await page.locator('statusd-status [part=name]').textContent(), 'Meeting room 4')
    // the value is announced politely when it changes
    assert.equal(
      await page.locator('statusd-status [role=status]').getAttribute('aria-live'),
      'polite',
    )
    // the page's dark scheme, unless the theme attribute says otherwise
    assert.equal(await hostBackground(page), 'rgb(17, 24, 39)')
    await page.evaluate("document.querySelector('statusd-status').setAttribute('theme', 'light')")
    assert.equal(await hostBackground(page), 'rgb(255, 255, 255)')
    await expectNoAxeViolations(page, 'a page embedding a status')

    const patched = await app.request(owner, 'PATCH', `/v1/status/${status.id}`, {
      value: 'OCCUPIED',
    })
    assert.equal(patched.statusCode, 200, patched.body)
    await valueReads(page, 'OCCUPIED')

    assert.deepEqual(seen.origins(), [base], 'statusd is the only other origin asked')
    assert.equal(seen.streams(), 1, 'one stream for one element')
    assert.deepEqual(seen.errors, [])
  })

  it('shows a private status through its private link, live', async (t) => {
    const { t: app, base } = await listeningApp(t)
    const owner = await app.user()
    const status = await createStatus(app, owner, 'desk', {
      name: 'Desk',
      value: 'IN',
      accessType: 'private',
    })
    const made = await app.request(owner, 'POST', `/v1/status/${status.id}/share-links`, {})
    assert.equal(made.statusCode, 201, made.body)
    const token = /\/l\/(sdp_[A-Za-z0-9]{43})$/.exec(made.json().url)?.[1]
    assert.ok(token, made.body)
    const site = await otherSite(t, base, snippet(base, 'link', token))
    const browser = await launchChromium()
    t.after(browser.close)
    const page = await browser.context.newPage()
    const seen = watch(page, site)
    await page.goto(site)
    await valueReads(page, 'IN')
    await app.request(owner, 'PATCH', `/v1/status/${status.id}`, { value: 'OUT' })
    await valueReads(page, 'OUT')
    assert.deepEqual(seen.origins(), [base])
    assert.deepEqual(seen.errors, [])
  })

  it('shows a pending end, in the language of the page around it', async (t) => {
    const { t: app, base } = await listeningApp(t)
    const owner = await app.user()
    const status = await createStatus(app, owner, 'room-5', {
      name: 'Raum 5',
      value: 'FREE',
      accessType: 'public',
    })
    const site = await otherSite(t, base, snippet(base, 'share', status.shareId), 'de-CH')
    const browser = await launchChromium()
    t.after(browser.close)
    const page = await browser.context.newPage()
    const seen = watch(page, site)
    await page.goto(site)
    await valueReads(page, 'FREE')
    const busy = await app.request(owner, 'PATCH', `/v1/status/${status.id}`, {
      value: 'BUSY',
      valueUntil: 'PT45M',
      valueAfter: 'FREE',
    })
    assert.equal(busy.statusCode, 200, busy.body)
    await valueReads(page, 'BUSY')
    const note = page.locator('statusd-status [part=note]')
    await note.filter({ hasText: /^bis \S+, dann FREE$/ }).waitFor()
    const shown = await note.textContent()
    const until = new Intl.DateTimeFormat('de', { hour: '2-digit', minute: '2-digit' }).format(
      new Date(busy.json().valueUntil),
    )
    assert.ok(shown?.includes(until), `${shown} names ${until}`)
    await app.request(owner, 'PATCH', `/v1/status/${status.id}`, { value: 'FREE' })
    await valueReads(page, 'FREE')
    await page.waitForFunction(
      "document.querySelector('statusd-status').shadowRoot.querySelector('[part=note]').textContent === ''",
    )
    await app.request(owner, 'PATCH', `/v1/status/${status.id}`, { accessType: 'private' })
    await valueReads(page, 'Dieser Status ist nicht verfügbar')
    assert.deepEqual(seen.errors, [])
  })

  it('says so when the status is not public', async (t) => {
    const { t: app, base } = await listeningApp(t)
    const owner = await app.user()
    const status = await createStatus(app, owner, 'hidden', { value: 'X', accessType: 'private' })
    const site = await otherSite(t, base, snippet(base, 'share', status.shareId))
    const browser = await launchChromium()
    t.after(browser.close)
    const page = await browser.context.newPage()
    const seen = watch(page, site)
    await page.goto(site)
    await valueReads(page, 'This status is not available')
    // the stream's refusal (404) is the only error the browser reports
    assert.ok(
      seen.errors.every((e) => /404/.test(e)),
      seen.errors.join('\n'),
    )
  })
})

describe('the Share tab’s embed code', { skip, timeout: 300_000 }, () => {
  it('pasted into another site’s page, shows the status; a private link’s code too', async (ctx) => {
    const server = await appServer(ctx)
    const owner = await signUpPerson(server, { name: 'Olivia' })
    const status = await makeStatus(server, owner, 'room-4', {
      name: 'Meeting room 4',
      value: 'FREE',
      accessType: 'public',
    })
    const { page } = await openApp(ctx, server, {
      person: owner,
      path: `/statuses/${status.id}/share`,
    })
    await expectScreen(page, 'Meeting room 4')
    const code = await page.getByRole('textbox', { name: 'Embed code', exact: true }).inputValue()
    assert.equal(
      code,
      `<script type="module" src="${server.origin}/embed.js"></script> <statusd-status share="${status.shareId}"></statusd-status>`,
    )
    await page.getByRole('button', { name: 'Make a private link' }).click()
    const linkCode = await page
      .getByRole('textbox', { name: 'Embed code for this link' })
      .inputValue()
    assert.match(linkCode, /<statusd-status link="sdp_[A-Za-z0-9]{43}"><\/statusd-status>$/)

    for (const pasted of [code, linkCode]) {
      const site = await otherSite(ctx, server.origin, pasted)
      const browser = await launchChromium()
      ctx.after(browser.close)
      const other = await browser.context.newPage()
      const seen = watch(other, site)
      await other.goto(site)
      await valueReads(other, 'FREE')
      assert.deepEqual(seen.origins(), [server.origin])
      assert.deepEqual(seen.errors, [])
    }
  })
})

describe('the embed’s files and headers', () => {
  it('/embed.js is a module any origin may load, always revalidated', async (t) => {
    const { t: app } = await listeningApp(t)
    const res = await app.request(null, 'GET', '/embed.js', undefined, {
      origin: 'https://example.org',
    })
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /javascript/)
    assert.equal(res.headers['access-control-allow-origin'], '*')
    assert.equal(res.headers['cache-control'], 'no-cache')
    assert.equal(res.headers['access-control-allow-credentials'], undefined)
    const again = await app.request(null, 'GET', '/embed.js', undefined, {
      'if-none-match': String(res.headers.etag),
    })
    assert.equal(again.statusCode, 304)
    assert.equal((await app.request(null, 'GET', '/app/embed.js')).statusCode, 404)
  })

  it('a private link’s view and stream refusal answer any origin, still never cached', async (t) => {
    const { t: app } = await listeningApp(t)
    for (const url of ['/v1/share-links/sdp_nosuch', '/v1/share-links/sdp_nosuch/events']) {
      const res = await app.request(null, 'GET', url, undefined, { origin: 'https://example.org' })
      assert.equal(res.statusCode, 404, url)
      assert.equal(res.headers['access-control-allow-origin'], '*', url)
      assert.equal(res.headers['cache-control'], 'private, no-store', url)
      assert.equal(res.headers['referrer-policy'], 'no-referrer', url)
    }
  })
})
