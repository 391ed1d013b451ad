import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { dateTimeIn } from '../../src/i18n/i18n.ts'
import { RENDER_CACHE_MAX_AGE_MS } from '../../src/modules/events/live-updates.plugin.ts'
import { setUser } from '../../src/modules/users/users.service.ts'
import { contrastRatio, PALETTE, TEXT_ON_COLOR } from '../../src/web/palette.ts'
import { makeApp, TEST_PLANS } from '../helpers/app.ts'
import { testClock } from '../helpers/clock.ts'
import { createStatus, grant, makeCast } from '../helpers/sharing.ts'

const get = (t: Awaited<ReturnType<typeof makeApp>>, url: string) => t.request(null, 'GET', url)

/** Every href in a page: only http(s), mailto, or our own assets may appear. */
const hrefs = (page: string) => [...page.matchAll(/\bhref="([^"]*)"/g)].map((m) => m[1] as string)

const HOSTILE = {
  name: '<script>alert(1)</script>',
  value: '<b>x</b>',
  description: [
    '"><img src=x onerror=alert(1)>',
    "'><svg onload=alert(2)>",
    'javascript:alert(3)',
    '<a href="javascript:alert(4)">click</a>',
    'ok: https://safe.example.com/?q=1&y=2',
  ].join('\n'),
}

/** Checks that a page or badge carries no markup from the data, only from our templates. */
function assertInert(body: string, what: string) {
  assert.ok(!body.includes('<script>alert'), `${what}: no injected script element`)
  assert.ok(!/<img/i.test(body), `${what}: no injected img element`)
  assert.ok(!/<svg onload/i.test(body), `${what}: no injected svg element`)
  // attribute values are escaped (no raw quote inside), so dropping them leaves the tags bare
  const bare = body.replace(/"[^"]*"/g, '""')
  assert.ok(!/<[^>]*\son[a-z]+\s*=/i.test(bare), `${what}: no event-handler attribute in any tag`)
  assert.ok(!/<b>x<\/b>/.test(body), `${what}: the value is text`)
  for (const href of hrefs(body))
    assert.match(href, /^(https?:\/\/|mailto:|\/s\/assets\/)/, `${what}: href ${href}`)
}

describe('share page GET /s/:shareId', () => {
  it('renders a public status: name, value in its colour, description, last change; strict CSP', async (ctx) => {
    const t = await makeApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-4', {
      name: 'Meeting room 4',
      value: 'OCCUPIED',
      colorNo: 2,
      accessType: 'public',
      description: 'Book at https://rooms.example.com\nor call 123',
    })
    const res = await get(t, `/s/${s.shareId}`)
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/)
    const csp = String(res.headers['content-security-policy'])
    assert.match(csp, /default-src 'none'/)
    assert.match(csp, /script-src 'self'(;|$)/, 'no inline scripts')
    assert.match(csp, /style-src 'self'(;|$)/, 'no inline styles')
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    const page = res.body
    assert.match(page, /<h1 id="name" dir="auto">Meeting room 4<\/h1>/)
    assert.match(
      page,
      /<p id="value" class="value c2" data-length="8" aria-live="polite" dir="auto"><span id="value-text">OCCUPIED<\/span><\/p>/,
    )
    // the server's text in UTC, in the page's language; the script shows "5 minutes ago"
    // (docs/sharing.md#relative-times)
    const at = dateTimeIn('en', String(s.valueUpdatedAt))
    assert.match(at, / UTC$/)
    assert.ok(
      page.includes(`<time datetime="${s.valueUpdatedAt}" title="${at}">${at}</time>`),
      'the time in UTC',
    )
    assert.match(
      page,
      /Book at <a href="https:\/\/rooms\.example\.com" rel="nofollow noopener ugc">https:\/\/rooms\.example\.com<\/a>\nor call 123/,
    )
    assert.ok(!/<script>/.test(page) && !/<style/.test(page), 'no inline script or style')
    assert.match(page, new RegExp(`data-events="/v1/share/${s.shareId}/events"`))
    assert.ok(!page.includes('History'), 'history is private by default: not on the page')
    assert.ok(!page.includes('People'), 'the user list is owner-only by default')
    const css = await get(t, /href="(\/s\/assets\/share\.css[^"]*)"/.exec(page)?.[1] as string)
    assert.equal(css.statusCode, 200)
    assert.match(css.body, /\.c2\{--status-color:#b91c1c\}/)
    const js = await get(t, /src="(\/s\/assets\/share\.js[^"]*)"/.exec(page)?.[1] as string)
    assert.equal(js.statusCode, 200)
    assert.match(String(js.headers['content-type']), /javascript/)
  })

  it('shows history and people when their access types are public', async (ctx) => {
    const t = await makeApp(ctx)
    const { owner, updater } = await makeCast(t)
    const s = await createStatus(t, owner, 'build', {
      value: 'PASSING',
      accessType: 'public',
      accessTypeHistory: 'public',
      accessTypeUserList: 'public',
    })
    await grant(t, owner, s.id, updater, 'updater')
    await t.request(updater, 'PATCH', `/v1/status/${s.id}`, { value: 'FAILING' })
    const page = (await get(t, `/s/${s.shareId}`)).body
    const history = /<ol id="history-list">(.*?)<\/ol>/s.exec(page)?.[1] ?? ''
    assert.deepEqual(
      [...history.matchAll(/<span class="item-main" dir="auto">([^<]*)<\/span>/g)].map((m) => m[1]),
      ['FAILING', 'PASSING'],
    )
    assert.match(history, / · Uma Updater/, 'the user list is public: who is shown')
    assert.match(
      page,
      /<span class="item-main" dir="auto">Olivia Owner<\/span><span class="item-side">Owner<\/span>/,
    )
    assert.match(
      page,
      /<span class="item-main" dir="auto">Uma Updater<\/span><span class="item-side">Updater<\/span>/,
    )
  })

  it('a private or unknown share id is a 404 HTML page (not JSON), the badge a 404 SVG; malformed URLs too', async (ctx) => {
    const t = await makeApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'secret', { value: 'HIDDEN', name: 'Secret thing' })
    for (const url of [`/s/${s.shareId}`, '/s/zzzzzzzz', '/s/zzzzzzzz/nothing-here']) {
      const res = await get(t, url)
      assert.equal(res.statusCode, 404, url)
      assert.match(String(res.headers['content-type']), /^text\/html/, url)
      assert.match(res.body, /Status not found/)
      assert.ok(!res.body.includes('HIDDEN') && !res.body.includes('Secret thing'))
    }
    const badge = await get(t, `/s/${s.shareId}/badge.svg`)
    assert.equal(badge.statusCode, 404)
    assert.match(String(badge.headers['content-type']), /^image\/svg\+xml/)
    assert.ok(!badge.body.includes('HIDDEN'))
    // a share id that cannot be one (NUL) is refused before any lookup: still an image
    const bad = await get(t, '/s/a%00b/badge.svg')
    assert.equal(bad.statusCode, 400)
    assert.match(String(bad.headers['content-type']), /^image\/svg\+xml/)
    assert.match(bad.body, /^<svg/)
    // and so is a URL too malformed to route (a broken percent-encoding), and the page's
    // own is a page
    const broken = await get(t, '/s/%zz/badge.svg?style=flat')
    assert.equal(broken.statusCode, 400)
    assert.match(String(broken.headers['content-type']), /^image\/svg\+xml/)
    assert.match(broken.body, /^<svg/)
    assert.ok(broken.headers['x-request-id'])
    const page = await get(t, '/s/%zz')
    assert.equal(page.statusCode, 400)
    assert.match(String(page.headers['content-type']), /^text\/html/)
    assert.match(page.body, /Something went wrong/)
    // the API's own malformed URLs keep the JSON error body
    const api = await get(t, '/v1/status/%zz')
    assert.equal(api.statusCode, 400)
    assert.equal(api.json().errorCode, 'validationError')
  })

  it("links are clickable only while the owner's plan has descriptionLinks (a plan changed shows within the render cache's age limit)", async (ctx) => {
    const clock = testClock()
    const t = await makeApp(ctx, { deps: { clock } })
    const owner = await t.user({ plan: 'pro' })
    const s = await createStatus(t, owner, 'docs', {
      value: 'UP',
      accessType: 'public',
      description: 'See example.com and mail ops@example.com',
    })
    const before = (await get(t, `/s/${s.shareId}`)).body
    assert.match(
      before,
      /<a href="http:\/\/example\.com" rel="nofollow noopener ugc">example\.com<\/a>/,
    )
    assert.match(before, /<a href="mailto:ops@example\.com" rel="nofollow noopener ugc">/)
    await setUser(t.database.db, TEST_PLANS, owner.id, { plan: 'free' })
    // a plan changed announces no change of the status: the views rendered before it are
    // served until they are RENDER_CACHE_MAX_AGE_MS old (docs/sharing.md#caching-of-public-views)
    clock.advance(RENDER_CACHE_MAX_AGE_MS + 1)
    const after = (await get(t, `/s/${s.shareId}`)).body
    assert.ok(!after.includes('<a '), 'no link on a plan without links')
    assert.match(after, /See example\.com and mail ops@example\.com/)
    const json = (await get(t, `/v1/share/${s.shareId}`)).json()
    assert.deepEqual(json.descriptionParts, [{ text: 'See example.com and mail ops@example.com' }])
  })

  it('one link detector: what free refuses as a link, pro makes clickable (example.dev/docs)', async (ctx) => {
    const t = await makeApp(ctx)
    const description = 'Docs at example.dev/docs'
    const free = await t.user({ plan: 'free' })
    const refused = await t.request(free, 'POST', '/v1/status-keys/docs', { description })
    assert.equal(refused.statusCode, 402, refused.body)
    assert.equal(refused.json().errorCode, 'planFeatureUnavailable')
    const pro = await t.user({ plan: 'pro' })
    const s = await createStatus(t, pro, 'docs', { accessType: 'public', description })
    const json = (await get(t, `/v1/share/${s.shareId}`)).json()
    assert.deepEqual(json.descriptionParts, [
      { text: 'Docs at ' },
      { text: 'example.dev/docs', href: 'http://example.dev/docs' },
    ])
    assert.match(
      (await get(t, `/s/${s.shareId}`)).body,
      /<a href="http:\/\/example\.dev\/docs" rel="nofollow noopener ugc">example\.dev\/docs<\/a>/,
    )
  })
})

/** The `content` of every `<meta property|name="…">` in a page's head, by property or name. */
const metaTags = (page: string): Record<string, string> =>
  Object.fromEntries(
    [...page.matchAll(/<meta (?:property|name)="([^"]+)" content="([^"]*)">/g)].map((m) => [
      m[1] as string,
      m[2] as string,
    ]),
  )

describe('link previews (docs/sharing.md#link-previews)', () => {
  it('a share page carries Open Graph and Twitter card tags: name, value and its last change, its URL', async (ctx) => {
    const t = await makeApp(ctx, { deps: { publicUrl: 'https://status.example.com' } })
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'room-4', {
      name: 'Meeting room 4',
      value: 'OCCUPIED',
      accessType: 'public',
    })
    const page = (await get(t, `/s/${s.shareId}`)).body
    const meta = metaTags(page)
    const updated = `OCCUPIED · updated ${dateTimeIn('en', String(s.valueUpdatedAt))}`
    assert.deepEqual(
      {
        type: meta['og:type'],
        site: meta['og:site_name'],
        title: meta['og:title'],
        description: meta['og:description'],
        url: meta['og:url'],
        card: meta['twitter:card'],
        twitterTitle: meta['twitter:title'],
        twitterDescription: meta['twitter:description'],
        plain: meta.description,
      },
      {
        type: 'website',
        site: 'statusd',
        title: 'Meeting room 4',
        description: updated,
        url: `https://status.example.com/s/${s.shareId}`, // under PUBLIC_URL
        card: 'summary',
        twitterTitle: 'Meeting room 4',
        twitterDescription: updated,
        plain: updated,
      },
    )
    assert.equal(meta['og:image'], undefined, 'no image (docs/sharing.md#link-previews)')
  })

  it('a status with no value yet previews as "No value yet"; hostile names stay text in the tags', async (ctx) => {
    const t = await makeApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'odd', {
      name: '"><script>alert(1)</script>',
      accessType: 'public',
    })
    const page = (await get(t, `/s/${s.shareId}`)).body
    assert.ok(page.includes('<meta property="og:title" content="&quot;&gt;&lt;script&gt;'))
    assert.equal(metaTags(page)['og:description'], 'No value yet')
    assertInert(page, 'share page head')
  })

  it('a private share link page carries no preview tags and a title that names nothing', async (ctx) => {
    const t = await makeApp(ctx)
    const owner = await t.user({ plan: 'pro' })
    const s = await createStatus(t, owner, 'lab', { name: 'Lab door', value: 'LOCKED' })
    const { url } = (await t.request(owner, 'POST', `/v1/status/${s.id}/share-links`, {})).json()
    const res = await get(t, url)
    assert.equal(res.statusCode, 200)
    const head = res.body.slice(0, res.body.indexOf('</head>'))
    assert.deepEqual(
      Object.keys(metaTags(head)).filter(
        (k) => k !== 'viewport' && k !== 'robots' && k !== 'color-scheme',
      ),
      [],
      'no og:, twitter: or description tags',
    )
    assert.match(head, /<title>Private status<\/title>/)
    assert.ok(!head.includes('Lab door') && !head.includes('LOCKED'), 'the head names nothing')
    assert.match(res.body, /<body data-kind="link"/)
  })
})

describe('XSS: hostile names, values and descriptions stay text', () => {
  for (const plan of ['pro', 'free'] as const)
    it(`the share page escapes everything (${plan} plan)`, async (ctx) => {
      const t = await makeApp(ctx)
      const owner = await t.user({ plan })
      const description =
        plan === 'pro' ? HOSTILE.description : HOSTILE.description.replace(/https:\S+/, '')
      const s = await createStatus(t, owner, 'hostile', {
        name: HOSTILE.name,
        value: HOSTILE.value,
        accessType: 'public',
        description,
      })
      const page = (await get(t, `/s/${s.shareId}`)).body
      assertInert(page, 'page')
      assert.match(
        page,
        /<title>&lt;script&gt;alert\(1\)&lt;\/script&gt;: &lt;b&gt;x&lt;\/b&gt;<\/title>/,
      )
      assert.match(page, /<h1 id="name" dir="auto">&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/h1>/)
      assert.match(page, /&quot;&gt;&lt;img src=x onerror=alert\(1\)&gt;/)
      assert.match(page, /&lt;a href=&quot;javascript:alert\(4\)&quot;&gt;click&lt;\/a&gt;/)
      const links = [...page.matchAll(/<a [^>]*>/g)].map((m) => m[0])
      if (plan === 'pro')
        assert.deepEqual(links, [
          '<a href="https://safe.example.com/?q=1&amp;y=2" rel="nofollow noopener ugc">',
        ])
      else assert.deepEqual(links, [])
    })

  it('the badge escapes the name and the value', async (ctx) => {
    const t = await makeApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'hostile', {
      name: '"><img src=x onerror=alert(1)>',
      value: '<b>x</b>',
      accessType: 'public',
    })
    const res = await get(t, `/s/${s.shareId}/badge.svg`)
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^image\/svg\+xml/)
    // kept by caches, revalidated by its ETag on every use (docs/sharing.md#caching-of-public-views)
    assert.equal(res.headers['cache-control'], 'public, no-cache')
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/)
    assertInert(res.body, 'badge')
    assert.match(
      res.body,
      /aria-label="&quot;&gt;&lt;img src=x onerror=alert\(1\)&gt;: &lt;b&gt;x&lt;\/b&gt;"/,
    )
    // shields.io's flat style: a blurred shadow, a shadow and the text, for each side
    assert.equal((res.body.match(/<text /g) ?? []).length, 6, 'only our own text elements')
  })
})

describe('the badge', () => {
  it('is "name | value" in the status colour', async (ctx) => {
    const t = await makeApp(ctx)
    const { owner } = await makeCast(t)
    const s = await createStatus(t, owner, 'build', {
      name: 'Build main',
      value: 'PASSING',
      colorNo: 3,
      accessType: 'public',
    })
    const svg = (await get(t, `/s/${s.shareId}/badge.svg`)).body
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    assert.match(svg, /fill="#15803d"/, 'colour 3 (green)')
    assert.match(svg, />Build main<\/text>/)
    assert.match(svg, />PASSING<\/text>/)
  })
})

describe('the palette', () => {
  it('has 12 distinct colours, each readable with white text (WCAG AA, ≥ 4.5:1)', () => {
    assert.deepEqual(
      PALETTE.map((c) => c.colorNo),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    )
    assert.equal(new Set(PALETTE.map((c) => c.hex)).size, 12)
    for (const c of PALETTE)
      assert.ok(contrastRatio(c.hex, TEXT_ON_COLOR) >= 4.5, `${c.name} ${c.hex}`)
  })

  it('is documented in docs/api.md#colour-palette as src/web/palette.ts defines it', () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8')
    const rows = [
      ...doc.matchAll(
        /^\| (\d+)(?: \(default\))? +\| (\w+) +\| `(#[0-9a-f]{6})` \| ([\d.]+) +\|$/gm,
      ),
    ]
    assert.deepEqual(
      rows.map(([, no, name, hex, ratio]) => [Number(no), name, hex, ratio]),
      PALETTE.map((c) => [
        c.colorNo,
        c.name,
        c.hex,
        contrastRatio(c.hex, TEXT_ON_COLOR).toFixed(2),
      ]),
    )
  })
})

describe('link detection (shared by the plan rule and the page)', () => {
  it('a bare domain is a link: 402 on a plan without links, clickable on one with them', async (ctx) => {
    const t = await makeApp(ctx)
    const free = await t.user({ plan: 'free' })
    const refused = await t.request(free, 'POST', '/v1/status-keys/docs', {
      value: 'UP',
      description: 'Docs at example.com',
    })
    assert.equal(refused.statusCode, 402)
    assert.equal(refused.json().errorCode, 'planFeatureUnavailable')
    const pro = await t.user({ plan: 'pro' })
    const s = await createStatus(t, pro, 'docs', {
      value: 'UP',
      accessType: 'public',
      description: 'Docs at example.com',
    })
    const json = (await get(t, `/v1/share/${s.shareId}`)).json()
    assert.deepEqual(json.descriptionParts, [
      { text: 'Docs at ' },
      { text: 'example.com', href: 'http://example.com' },
    ])
  })
})
