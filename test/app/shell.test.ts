import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { appServer, expectScreen, openApp, signUpPerson } from '../helpers/app-browser.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing } from '../helpers/browser.ts'

// The app's shell (docs/app.md): the page every screen loads, signing in, the frame, the
// offline shell, and what the page promises (nothing from elsewhere, a small first load).

describe('the app shell', { skip: chromiumMissing(), timeout: 300_000 }, () => {
  it('signed out, / shows sign-in; signing in with the form shows the board', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server, { name: 'Grace' })
    const { page } = await openApp(ctx, server)
    await expectScreen(page, 'Sign in')
    assert.equal(new URL(page.url()).pathname, '/sign-in')
    await page.getByLabel('E-mail').fill(person.email)
    await page.getByLabel('Password').fill('plum tree at dusk 42')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await expectScreen(page, 'Board')
    assert.equal(new URL(page.url()).pathname, '/')
    await page.getByRole('navigation', { name: 'Main' }).waitFor()
  })

  it('a wrong password shows the API’s own message and stays on sign-in', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const { page } = await openApp(ctx, server, { path: '/sign-in', allowConsoleErrors: true })
    await page.getByLabel('E-mail').fill(person.email)
    await page.getByLabel('Password').fill('not the password at all')
    await page.getByRole('button', { name: 'Sign in' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    assert.match((await alert.textContent()) ?? '', /e-mail address or password/i)
    await expectScreen(page, 'Sign in')
  })

  it('a screen opened directly while signed out comes back after signing in', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const { page } = await openApp(ctx, server, { path: '/keys?x=1' })
    await expectScreen(page, 'Sign in')
    assert.equal(new URL(page.url()).searchParams.get('next'), '/keys?x=1')
    await page.getByLabel('E-mail').fill(person.email)
    await page.getByLabel('Password').fill('plum tree at dusk 42')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL((url) => url.pathname === '/keys')
  })

  it('loads nothing from another origin, and no inline script or style (its CSP holds)', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const requested: string[] = []
    const { page } = await openApp(ctx, server, { person, path: '/sign-in' })
    page.on('request', (request) => requested.push(request.url()))
    await page.goto(`${server.origin}/`)
    await expectScreen(page, 'Board')
    const foreign = requested.filter((url) => new URL(url).origin !== server.origin)
    assert.deepEqual(foreign, [])
    const res = await server.t.request(null, 'GET', '/')
    assert.match(String(res.headers['content-security-policy']), /script-src 'self';/)
    assert.doesNotMatch(String(res.headers['content-security-policy']), /unsafe-inline/)
  })

  it('is installable: a manifest with icons, and a service worker that serves the shell offline', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const { page, context } = await openApp(ctx, server, { person, allowConsoleErrors: true })
    await expectScreen(page, 'Board')
    const manifest = (await server.t.request(null, 'GET', '/manifest.webmanifest')).json()
    assert.equal(manifest.start_url, '/')
    for (const icon of manifest.icons) {
      const res = await server.t.request(null, 'GET', icon.src)
      assert.equal(res.statusCode, 200, icon.src)
    }
    await page.evaluate('navigator.serviceWorker.ready.then(() => true)')
    await page.reload() // now under the worker's control
    await expectScreen(page, 'Board')
    await context.setOffline(true)
    await page.reload()
    // the shell came from the worker's cache; the data cannot, and the app says so
    await page.locator('#app').waitFor()
    assert.ok(await page.locator('link[rel=manifest]').count())
    await context.setOffline(false)
  })

  it('an unknown address under the app shows the app’s not-found screen (404); the API’s keep their JSON 404', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
    // what each request is answered with: the app's page (its not-found screen) or JSON
    const scenarios = [
      { method: 'GET', path: '/nonexistent/page', accept: html, page: true },
      { method: 'HEAD', path: '/nonexistent/page', accept: html, page: true },
      { method: 'GET', path: '/statuses', accept: html, page: true },
      { method: 'GET', path: '/nonexistent/page', accept: '*/*', page: false },
      { method: 'GET', path: '/nonexistent/page', accept: 'application/json', page: false },
      { method: 'POST', path: '/nonexistent/page', accept: html, page: false },
      { method: 'GET', path: '/v1/nonexistent', accept: html, page: false },
      { method: 'GET', path: '/v1', accept: html, page: false },
    ] as const
    for (const { method, path, accept, page: isPage } of scenarios) {
      const res = await fetch(`${server.origin}${path}`, { method, headers: { accept } })
      const what = `${method} ${path} (${accept})`
      assert.equal(res.status, 404, what)
      const type = String(res.headers.get('content-type'))
      const body = await res.text()
      if (isPage) {
        assert.match(type, /^text\/html/, what)
        assert.match(String(res.headers.get('content-security-policy')), /script-src 'self'/)
        if (method === 'GET') assert.match(body, /<div id="app">/, what)
      } else {
        assert.match(type, /^application\/json/, what)
        assert.equal(JSON.parse(body).errorCode, 'notFound', what)
      }
    }

    // in a browser: the not-found screen, signed in (in the app's frame) and signed out
    const signedIn = await openApp(ctx, server, { person, path: '/nonexistent/page' })
    await expectScreen(signedIn.page, 'Nothing here')
    await signedIn.page.getByRole('navigation', { name: 'Main' }).waitFor()
    await expectNoAxeViolations(signedIn.page, 'not found, signed in')
    await signedIn.page.getByRole('link', { name: 'Back to the board' }).click()
    await expectScreen(signedIn.page, 'Board')
    const signedOut = await openApp(ctx, server, {
      path: '/nonexistent/page',
      viewport: { width: 390, height: 844 },
    })
    await expectScreen(signedOut.page, 'Nothing here')
    assert.equal(new URL(signedOut.page.url()).pathname, '/nonexistent/page')
    await expectNoAxeViolations(signedOut.page, 'not found, signed out, 390 px')
  })

  it('the phone header is one compact row at 390×844; every place stays one tap away, by touch and by keyboard', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server, { name: 'Grace' })
    const { page } = await openApp(ctx, server, {
      person,
      viewport: { width: 390, height: 844 },
    })
    await expectScreen(page, 'Board')
    const header = page.locator('header.app-header')
    const box = await header.boundingBox()
    assert.ok(box && box.height <= 64, `one row: the header is ${box?.height} px high`)
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'))
    // one row: the brand, every place and Sign out share the header's top and bottom
    const rows = await header.evaluate((el) => {
      const items = [
        el.querySelector('.brand'),
        ...el.querySelectorAll('nav a'),
        el.querySelector('.who button'),
      ]
      return [
        ...new Set(
          items.map((item) => {
            const r = (
              item as unknown as { getBoundingClientRect(): { top: number; bottom: number } }
            ).getBoundingClientRect()
            return Math.round((r.top + r.bottom) / 2)
          }),
        ),
      ].length
    })
    assert.equal(rows, 1, 'every part of the header on one line')
    const nav = page.getByRole('navigation', { name: 'Main' })
    // the last place, even when the row scrolls sideways, is a tap away
    await nav.getByRole('link', { name: 'Account' }).click()
    await expectScreen(page, 'Account')
    // the current place is in view, and marked for screen readers
    const current = nav.locator('a[aria-current="page"]')
    assert.equal(await current.textContent(), 'Account')
    assert.ok(await current.isVisible())
    const inView = await current.evaluate((a) => {
      const el = a as unknown as {
        getBoundingClientRect(): { left: number; right: number }
        closest(s: string): { getBoundingClientRect(): { left: number; right: number } }
      }
      const r = el.getBoundingClientRect()
      const n = el.closest('nav').getBoundingClientRect()
      return r.left >= n.left - 1 && r.right <= n.right + 1
    })
    assert.ok(inView, 'the current place is scrolled into view')
    // by keyboard, from the top of the page: the skip link, the brand, then each place in order
    await page.reload()
    await expectScreen(page, 'Account')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Tab')
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Board')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Enter')
    await expectScreen(page, 'Walls')
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    await expectNoAxeViolations(page, 'walls with the phone header, 390 px')
    // a desktop shows the name and every place at once, in one row as before
    const wide = await openApp(ctx, server, { person, viewport: { width: 1280, height: 800 } })
    await expectScreen(wide.page, 'Board')
    assert.ok(await wide.page.locator('header .brand span').isVisible())
    assert.ok(await wide.page.getByText('Grace', { exact: true }).isVisible())
    const wideBox = await wide.page.locator('header.app-header').boundingBox()
    assert.ok(wideBox && wideBox.height <= 72, `desktop header ${wideBox?.height} px`)
  })

  it('reloaded while the server is down, the app says the server cannot be reached (not signed out), and Try again comes back', async (ctx) => {
    const server = await appServer(ctx)
    const person = await signUpPerson(server)
    const { page } = await openApp(ctx, server, { person, viewport: { width: 390, height: 844 } })
    await expectScreen(page, 'Board')
    await page.evaluate('navigator.serviceWorker.ready.then(() => true)')
    await page.reload() // now under the worker's control, which keeps the shell
    await expectScreen(page, 'Board')
    // the server stops: nothing listens on its port any more
    const http = server.t.app.server
    await new Promise<void>((resolve) => {
      http.close(() => resolve())
      http.closeAllConnections()
    })
    await page.reload()
    await expectScreen(page, 'statusd cannot be reached')
    assert.equal(await page.getByLabel('Password').count(), 0, 'no sign-in form')
    assert.equal(new URL(page.url()).pathname, '/')
    await expectNoAxeViolations(page, 'server unreachable, phone')
    // the server is back on the same address
    await new Promise<void>((resolve) =>
      http.listen(Number(new URL(server.origin).port), '127.0.0.1', resolve),
    )
    await page.getByRole('button', { name: 'Try again' }).click()
    await expectScreen(page, 'Board')
  })

  for (const colorScheme of ['light', 'dark'] as const)
    for (const width of [375, 1280])
      it(`sign-in and the board pass axe (${colorScheme}, ${width} px)`, async (ctx) => {
        const server = await appServer(ctx)
        const person = await signUpPerson(server)
        const viewport = { width, height: 800 }
        const out = await openApp(ctx, server, { path: '/sign-in', viewport, colorScheme })
        await expectScreen(out.page, 'Sign in')
        await expectNoAxeViolations(out.page, `sign-in, ${colorScheme}, ${width} px`)
        const signedIn = await openApp(ctx, server, { person, viewport, colorScheme })
        await expectScreen(signedIn.page, 'Board')
        await expectNoAxeViolations(signedIn.page, `board, ${colorScheme}, ${width} px`)
      })
})
