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
