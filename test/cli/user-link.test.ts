import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { buildApp } from '../../src/app.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { DEFAULT_PLANS } from '../../src/modules/plans/plans.ts'
import { defer, tempDir } from '../helpers/cleanup.ts'
import { json, run } from '../helpers/cli.ts'
import { type TestClock, testClock } from '../helpers/clock.ts'

// `statusd user link <id|email>` (docs/operations.md#users, docs/accounts.md#e-mail): the CLI
// prints a one-time sign-in link; a browser follows it over a real socket to a server on the
// same database, and is signed in.

const HOUR = 60 * 60 * 1000

/** Sets environment variables for this test (the CLI reads its config from them). */
function env(ctx: TestContext, values: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(values)) {
    const saved = process.env[name]
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
    defer(ctx, () => {
      if (saved === undefined) delete process.env[name]
      else process.env[name] = saved
    })
  }
}

/** A server on a temp SQLite file, listening on 127.0.0.1; the CLI is pointed at both. */
async function serverAndCli(ctx: TestContext): Promise<{ base: string; clock: TestClock }> {
  const databaseUrl = `sqlite:${path.join(tempDir(ctx), 'statusd.db')}`
  const clock = testClock()
  const app = await buildApp({
    database: createDatabase(databaseUrl),
    plans: DEFAULT_PLANS,
    clock,
    keyCacheTtlMs: 0,
  })
  defer(ctx, () => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  env(ctx, {
    DATABASE_URL: databaseUrl,
    PLANS_FILE: undefined,
    PUBLIC_URL: undefined,
    HOST: '127.0.0.1',
    PORT: String(port),
  })
  return { base: `http://127.0.0.1:${port}`, clock }
}

const cookieOf = (res: Response): string | undefined =>
  res.headers
    .getSetCookie()
    .map((line) => line.split(';')[0] ?? '')
    .find((pair) => pair.startsWith('statusd_session='))

/** Submits the link page's form as a browser does. */
const submit = (link: string, base: string) =>
  fetch(link, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: base,
      'sec-fetch-site': 'same-origin',
    },
    body: '',
  })

describe('statusd user link', () => {
  it('prints a one-time link (one hour) that signs a browser in: GET page, POST, cookie, then 410', async (ctx) => {
    const { base } = await serverAndCli(ctx)
    const user = await json('user', 'add', '--name', 'Ada', '--email', 'ada@example.com')

    const human = await run('user', 'link', 'ADA@example.com')
    assert.equal(human.code, 0, human.stderr)
    assert.match(
      human.stdout,
      new RegExp(`^One-time sign-in link for user ${user.id}, valid until `),
    )
    const printed = /^ {4}(\S+)$/m.exec(human.stdout)?.[1] as string
    assert.ok(printed.startsWith(`${base}/auth/link/sdl_`), printed)

    const link = await json('user', 'link', user.id)
    assert.deepEqual(Object.keys(link).sort(), ['expiresAt', 'url', 'userId'])
    assert.equal(link.userId, user.id)
    assert.match(link.url, new RegExp(`^${base}/auth/link/sdl_[A-Za-z0-9]{43}$`))
    const inAnHour = Date.parse(link.expiresAt) - Date.now()
    assert.ok(inAnHour > HOUR - 60_000 && inAnHour <= HOUR, link.expiresAt)

    // opening it (a preview, a scanner) changes nothing
    const page = await fetch(link.url, { headers: { 'sec-fetch-site': 'cross-site' } })
    assert.equal(page.status, 200)
    assert.match(await page.text(), /<button type="submit">Sign in<\/button>/)
    assert.equal(cookieOf(page), undefined)

    const signedIn = await submit(link.url, base)
    assert.equal(signedIn.status, 303)
    assert.equal(signedIn.headers.get('location'), '/')
    const cookie = cookieOf(signedIn)
    assert.ok(cookie)
    const me = await fetch(`${base}/v1/user`, { headers: { cookie } })
    assert.equal(me.status, 200)
    assert.equal(((await me.json()) as { id: string }).id, user.id)
    const sessions = await fetch(`${base}/v1/user/sessions`, { headers: { cookie } })
    assert.equal(((await sessions.json()) as { method: string }[])[0]?.method, 'link')

    // used: a clear page, no session; the JSON route says 410 too
    const again = await submit(link.url, base)
    assert.equal(again.status, 410)
    assert.equal(cookieOf(again), undefined)
    assert.match(await again.text(), /This link has expired/)
    const token = link.url.slice(link.url.lastIndexOf('/') + 1)
    const api = await fetch(`${base}/v1/auth/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    })
    assert.equal(api.status, 410)
    assert.equal(((await api.json()) as { errorCode: string }).errorCode, 'gone')
    // the printed one still works (each link is its own)
    assert.equal((await submit(printed, base)).status, 303)
  })

  it('an expired link (an hour on) and a forged one sign no one in: 410 and 404', async (ctx) => {
    const { base, clock } = await serverAndCli(ctx)
    const user = await json('user', 'add', '--name', 'Bo')
    const link = await json('user', 'link', user.id)
    const forged = link.url.replace(/.$/, (c: string) => (c === 'a' ? 'b' : 'a'))
    const notFound = await submit(forged, base)
    assert.equal(notFound.status, 404)
    assert.match(await notFound.text(), /This link is not valid/)
    assert.equal(cookieOf(notFound), undefined)
    assert.equal((await fetch(forged)).status, 404)

    // the server's clock, to the link's expiry (made by the CLI on the real clock: an hour on)
    clock.advance(Date.parse(link.expiresAt) - clock.now() - 1)
    assert.equal((await fetch(link.url)).status, 200, 'a millisecond before, it works')
    clock.advance(1)
    assert.equal((await fetch(link.url)).status, 410)
    const expired = await submit(link.url, base)
    assert.equal(expired.status, 410)
    assert.equal(cookieOf(expired), undefined)
  })

  it('with PUBLIC_URL the link is on it; an unknown user is one clear line, exit 1', async (ctx) => {
    await serverAndCli(ctx)
    env(ctx, { PUBLIC_URL: 'https://status.example.com/' })
    const user = await json('user', 'add', '--name', 'Cy', '--email', 'cy@example.com')
    const link = await json('user', 'link', 'cy@example.com')
    assert.equal(link.userId, user.id)
    assert.match(link.url, /^https:\/\/status\.example\.com\/auth\/link\/sdl_/)
    const r = await run('user', 'link', 'nobody@example.com')
    assert.equal(r.code, 1)
    assert.equal(r.stderr, 'statusd: no user nobody@example.com\n')
    const usage = await run('user', 'link')
    assert.equal(usage.code, 2)
    assert.match(usage.stderr, /user link needs a user id or e-mail/)
  })
})
