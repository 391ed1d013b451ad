import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { expectNoAxeViolations } from '../helpers/axe.ts'
import { chromiumMissing, launchChromium, listeningApp } from '../helpers/browser.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { createStatus, makeCast } from '../helpers/sharing.ts'

// The pages statusd serves speak the reader's language (docs/languages.md#which-language-a-person-sees):
// `?lang=` first, then the browser's Accept-Language, else English; `<html lang>` says which,
// and `Vary: Accept-Language` keeps a cache from handing one reader's page to another.

const WAIT = { timeout: 20_000 }

/** A public status with a value, a public board of it, and an invitation to it. */
async function shared(t: TestApp) {
  const { owner } = await makeCast(t)
  const s = await createStatus(t, owner, 'room', {
    name: 'Meeting room 4',
    value: 'OCCUPIED',
    accessType: 'public',
    accessTypeHistory: 'public',
    accessTypeUserList: 'public',
  })
  const board = await t.request(owner, 'POST', '/v1/boards', {
    name: 'Floor 2',
    statusIds: [s.id],
    accessType: 'public',
  })
  assert.equal(board.statusCode, 201, board.body)
  const invitation = await t.request(owner, 'POST', `/v1/status/${s.id}/invitations`, {
    role: 'subscriber',
  })
  assert.equal(invitation.statusCode, 201, invitation.body)
  return {
    share: s.shareId as string,
    wall: board.json().shareId as string,
    invite: new URL(invitation.json().url).pathname,
  }
}

/** A page in `lang`, with the words that show it, chosen as the request asked. */
const inLanguage =
  (lang: 'en' | 'de', words: RegExp[]) => (body: string, headers: Record<string, unknown>) => {
    assert.match(body, new RegExp(`<html lang="${lang}">`))
    for (const word of words) assert.match(body, word)
    assert.match(String(headers.vary), /accept-language/i)
  }

/** A page request and what its answer must be (an endpoint table for pages: HTML, not JSON). */
interface PageCase {
  name: string
  url: string
  headers?: Record<string, string>
  expectStatus: number
  expect: (body: string, headers: Record<string, unknown>) => void
}

const GERMAN = { 'accept-language': 'de-AT,de;q=0.9,en;q=0.5' }
const ENGLISH = { 'accept-language': 'en-GB,en;q=0.9' }

const PAGES: PageCase[] = [
  {
    name: 'languages: the app’s page starts in the browser’s language (the app then picks its own)',
    url: '/',
    headers: GERMAN,
    expectStatus: 200,
    expect: inLanguage('de', [/<noscript>Die App von statusd braucht JavaScript/]),
  },
  {
    name: 'languages: the share page in German by Accept-Language',
    url: '/s/{share}',
    headers: GERMAN,
    expectStatus: 200,
    expect: inLanguage('de', [
      /Geändert <time/,
      /<h2 id="history-title">Verlauf<\/h2>/,
      /Geteilt mit statusd/,
    ]),
  },
  {
    name: 'languages: ?lang=de wins over an English Accept-Language',
    url: '/s/{share}?lang=de',
    headers: ENGLISH,
    expectStatus: 200,
    expect: inLanguage('de', [/Geändert <time/, /· aktualisiert /]),
  },
  {
    name: 'languages: ?lang=en wins over a German Accept-Language',
    url: '/s/{share}?lang=en',
    headers: GERMAN,
    expectStatus: 200,
    expect: inLanguage('en', [/Changed <time/, /Shared with statusd/]),
  },
  {
    name: 'languages: a ?lang= statusd does not speak is ignored: Accept-Language chooses',
    url: '/s/{share}?lang=fr',
    headers: GERMAN,
    expectStatus: 200,
    expect: inLanguage('de', [/Geändert <time/]),
  },
  {
    name: 'languages: no Accept-Language, and one statusd does not speak, give English',
    url: '/s/{share}',
    headers: { 'accept-language': 'fr-FR, ja;q=0.5' },
    expectStatus: 200,
    expect: inLanguage('en', [/Changed <time/]),
  },
  {
    name: 'languages: the dates on a German page are written as German writes them',
    url: '/s/{share}?lang=de',
    expectStatus: 200,
    expect: (body) =>
      assert.match(
        body,
        /<time datetime="[^"]+" title="\d{1,2}\. [A-ZÄÖÜ][a-zäöü]+ \d{4} um \d\d:\d\d UTC">/,
      ),
  },
  {
    name: 'languages: the page’s script gets its words in the page’s language',
    url: '/s/{share}',
    headers: GERMAN,
    expectStatus: 200,
    expect: (body) => {
      const texts = body.match(/data-texts="([^"]+)"/)?.[1] ?? ''
      const parsed = JSON.parse(texts.replaceAll('&quot;', '"').replaceAll('&amp;', '&'))
      assert.equal(parsed.changed, 'Geändert {time}')
      assert.equal(parsed.justNow, 'gerade eben')
    },
  },
  {
    name: 'languages: the not-found page in German',
    url: '/s/zzzzzzzz',
    headers: GERMAN,
    expectStatus: 404,
    expect: inLanguage('de', [/<h1>Status nicht gefunden<\/h1>/]),
  },
  {
    name: 'languages: the wall in German',
    url: '/b/{wall}',
    headers: GERMAN,
    expectStatus: 200,
    expect: inLanguage('de', [/aria-label="Status"/, /<h1 dir="auto">Floor 2<\/h1>/]),
  },
  {
    name: 'languages: the invitation page in German, the status’s name as typed',
    url: '/invite/{invite}?lang=de',
    expectStatus: 200,
    expect: inLanguage('de', [
      /<title>Einladung zu Meeting room 4<\/title>/,
      /lädt dich ein, diesem Status zu folgen – als Abonnent: Du siehst ihn/,
      /Registrieren und annehmen/,
    ]),
  },
  {
    name: 'languages: a mailed link’s page in German',
    url: '/auth/verify/sdl_unknown',
    headers: GERMAN,
    expectStatus: 404,
    expect: inLanguage('de', [/<h1>Dieser Link ist ungültig<\/h1>/]),
  },
  {
    name: 'languages: an unknown reset link’s page in German, by ?lang=',
    url: '/auth/reset/sdl_unknown?lang=de',
    expectStatus: 404,
    expect: inLanguage('de', [/Sonst fordere einen neuen an/]),
  },
]

describe('languages: pages by ?lang= and Accept-Language', () => {
  let t: TestApp
  let vars: Record<string, string>
  const suite = suiteLifetime()
  before(async () => {
    t = await makeApp(suite)
    const { share, wall, invite } = await shared(t)
    vars = { share, wall, invite: invite.slice('/invite/'.length) }
  })
  for (const c of PAGES)
    it(c.name, async () => {
      const url = c.url.replace(/\{(\w+)\}/g, (_, name: string) => vars[name] as string)
      const res = await t.request(null, 'GET', url, undefined, c.headers ?? {})
      assert.equal(res.statusCode, c.expectStatus, res.body)
      c.expect(res.body, res.headers)
    })
})

describe('languages: a German share page and wall in Chromium', { skip: chromiumMissing() }, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  before(async () => {
    browser = await launchChromium()
  })
  after(async () => {
    await browser?.close()
  })

  it('languages: the share page’s script keeps it German (live, relative times) and the wall’s too; these and the invitation and link pages with no console error and no axe finding', async (ctx) => {
    const { t, base } = await listeningApp(ctx)
    const { share, wall, invite } = await shared(t)
    for (const width of [375, 1280]) {
      const page = await browser.context.newPage()
      await page.setViewportSize({ width, height: 800 })
      const problems: string[] = []
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text())
      })
      page.on('pageerror', (e) => problems.push(e.message))
      await page.goto(`${base}/s/${share}?lang=de`)
      await page.waitForSelector('#live[data-state="live"]', WAIT)
      assert.equal(await page.textContent('#live'), 'Live')
      // the relative time, from the page's language: "Geändert gerade eben", "… vor 1 Minute"
      await page.waitForFunction(
        "/^Geändert (gerade eben|vor )/.test(document.getElementById('changed')?.textContent ?? '')",
        undefined,
        WAIT,
      )
      await expectNoAxeViolations(page, `German share page, ${width} px`)
      await page.goto(`${base}/b/${wall}?lang=de`)
      await page.waitForFunction(
        "/^(gerade eben|vor )/.test(document.querySelector('.tile time')?.textContent ?? '')",
        undefined,
        WAIT,
      )
      await expectNoAxeViolations(page, `German wall, ${width} px`)
      await page.goto(`${base}${invite}?lang=de`)
      assert.equal(await page.getAttribute('html', 'lang'), 'de')
      await expectNoAxeViolations(page, `German invitation page, ${width} px`)
      assert.deepEqual(problems, [])
      // a link's page that answers 404 (the browser logs that status, nothing else)
      await page.goto(`${base}/auth/reset/sdl_unknown?lang=de`)
      assert.equal(await page.getAttribute('html', 'lang'), 'de')
      await expectNoAxeViolations(page, `German unknown reset link page, ${width} px`)
      await page.close()
    }
  })
})
