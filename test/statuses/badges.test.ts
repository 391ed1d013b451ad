import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { makeBadge } from 'badge-maker'
import { BADGE_STYLES } from '../../src/web/badge.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { createStatus } from '../helpers/sharing.ts'

// docs/sharing.md#share-page-and-badge: badges drawn by shields.io's own renderer in its
// styles, `?label=`, and `badge.json` in shields.io's endpoint format, with the SVG's caching
// and access rules.

let t: TestApp
let owner: TestUser
let build: { id: string; shareId: string }
let hidden: { shareId: string }
const suite = suiteLifetime()
before(async () => {
  t = await makeApp(suite)
  owner = await t.user()
  build = await createStatus(t, owner, 'build', {
    name: 'Build main',
    value: 'PASSING',
    colorNo: 3,
    accessType: 'public',
  })
  hidden = await createStatus(t, owner, 'secret', { name: 'Secret', value: 'HIDDEN' })
})

const get = (url: string, headers: Record<string, string> = {}) =>
  t.request(null, 'GET', url, undefined, headers)

/** What shields.io's renderer draws for this text in this style. */
const shields = (label: string, message: string, color: string, style = 'flat') =>
  makeBadge({
    label,
    message,
    color,
    labelColor: '#555555',
    style: style as 'flat',
  })

describe('badge styles', () => {
  it('each of the five styles is drawn by shields.io\'s renderer: "name | value" in the status colour', async () => {
    const drawn = new Set<string>()
    for (const style of BADGE_STYLES) {
      const res = await get(`/s/${build.shareId}/badge.svg?style=${style}`)
      assert.equal(res.statusCode, 200, style)
      assert.match(String(res.headers['content-type']), /^image\/svg\+xml/)
      assert.equal(res.body, shields('Build main', 'PASSING', '#15803d', style), style)
      drawn.add(res.body)
    }
    assert.equal(drawn.size, BADGE_STYLES.length, 'five different looks')
  })

  it('without a style, flat', async () => {
    const res = await get(`/s/${build.shareId}/badge.svg`)
    assert.equal(res.body, (await get(`/s/${build.shareId}/badge.svg?style=flat`)).body)
    assert.match(res.body, /fill="#15803d"/, 'colour 3 (green)')
    assert.match(res.body, />Build main<\/text>/)
    assert.match(res.body, />PASSING<\/text>/)
  })

  it('text has its real width: wide letters make a wider badge than narrow ones', async () => {
    const width = async (label: string) => {
      const svg = (await get(`/s/${build.shareId}/badge.svg?label=${label}`)).body
      return Number(/^<svg [^>]*width="([\d.]+)"/.exec(svg)?.[1])
    }
    assert.ok((await width('WWWWWWWW')) > (await width('iiiiiiii')) + 30)
  })

  it('an unknown style: 400, a grey "status | invalid style" badge, never cached', async () => {
    const res = await get(`/s/${build.shareId}/badge.svg?style=round`)
    assert.equal(res.statusCode, 400)
    assert.match(String(res.headers['content-type']), /^image\/svg\+xml/)
    assert.match(res.body, />invalid style<\/text>/)
    assert.match(res.body, /fill="#475569"/, 'grey (slate)')
    assert.equal(res.headers['cache-control'], 'no-cache, max-age=0')
    assert.ok(res.headers['x-request-id'])
  })

  it("other query parameters (cache busters, shields.io's own) are ignored", async () => {
    const res = await get(`/s/${build.shareId}/badge.svg?v=2&logo=github&style=plastic`)
    assert.equal(res.statusCode, 200)
    assert.equal(res.body, shields('Build main', 'PASSING', '#15803d', 'plastic'))
  })
})

describe('badge label', () => {
  it('?label= replaces the name, in any style', async () => {
    const res = await get(`/s/${build.shareId}/badge.svg?label=CI&style=for-the-badge`)
    assert.equal(res.statusCode, 200)
    assert.equal(res.body, shields('CI', 'PASSING', '#15803d', 'for-the-badge'))
  })

  it('the label is escaped: markup in it stays text', async () => {
    const label = '<img src=x onerror=alert(1)>&"'
    const res = await get(`/s/${build.shareId}/badge.svg?label=${encodeURIComponent(label)}`)
    assert.equal(res.statusCode, 200)
    assert.ok(!/<img/i.test(res.body), 'no injected element')
    assert.match(res.body, />&lt;img src=x onerror=alert\(1\)&gt;&amp;&quot;<\/text>/)
  })

  for (const [what, label] of [
    ['longer than 42 characters', 'x'.repeat(43)],
    ['empty', ''],
    ['a control character', 'a\u0007b'],
  ] as const)
    it(`a label ${what}: 400, a grey "status | invalid label" badge`, async () => {
      const res = await get(`/s/${build.shareId}/badge.svg?label=${encodeURIComponent(label)}`)
      assert.equal(res.statusCode, 400)
      assert.match(res.body, />invalid label<\/text>/)
    })
})

describe('badge caching and access', () => {
  it('each style and label has its own ETag; If-None-Match with it is 304; public, no-cache', async () => {
    const flat = await get(`/s/${build.shareId}/badge.svg`)
    const social = await get(`/s/${build.shareId}/badge.svg?style=social`)
    assert.equal(flat.headers['cache-control'], 'public, no-cache')
    assert.match(String(flat.headers.etag), new RegExp(`^"${build.shareId}\\.\\d+-`))
    assert.notEqual(flat.headers.etag, social.headers.etag)
    const again = await get(`/s/${build.shareId}/badge.svg?style=social`, {
      'if-none-match': String(social.headers.etag),
    })
    assert.equal(again.statusCode, 304)
    assert.equal(again.body, '')
    const other = await get(`/s/${build.shareId}/badge.svg`, {
      'if-none-match': String(social.headers.etag),
    })
    assert.equal(other.statusCode, 200, "another style's tag does not match")
  })

  it('a new value shows at once, in every style (nothing kept by a stale key)', async () => {
    const s = await createStatus(t, owner, 'deploy', {
      name: 'Deploy',
      value: 'IDLE',
      accessType: 'public',
    })
    let value = 'IDLE'
    for (const style of ['flat', 'social']) {
      const url = `/s/${s.shareId}/badge.svg?style=${style}`
      assert.match((await get(url)).body, new RegExp(`>${value}</text>`))
      value = `RUN-${style}`
      await t.request(owner, 'PATCH', `/v1/status/${s.id}`, { value })
      assert.match((await get(url)).body, new RegExp(`>${value}</text>`))
    }
  })

  it('a private status, in any style: 404, the grey "status | not found" badge', async () => {
    const res = await get(`/s/${hidden.shareId}/badge.svg?style=for-the-badge&label=Leak`)
    assert.equal(res.statusCode, 404)
    assert.match(res.body, />not found<\/text>/)
    assert.ok(!res.body.includes('HIDDEN') && !res.body.includes('Secret'))
  })

  it("a private share link's badge takes the styles and the label too", async () => {
    const made = await t.request(owner, 'POST', `/v1/status/${build.id}/share-links`, {})
    assert.equal(made.statusCode, 201, made.body)
    const token = String(made.json().url).split('/').pop()
    const res = await get(`/l/${token}/badge.svg?style=social&label=CI`)
    assert.equal(res.statusCode, 200)
    assert.equal(res.body, shields('CI', 'PASSING', '#15803d', 'social'))
    assert.equal(res.headers['cache-control'], 'private, no-store')
  })
})

describe('badge.json (shields.io endpoint format)', () => {
  it("is the SVG's text and colour in shields.io's endpoint format, with an ETag, public, no-cache", async () => {
    const res = await get(`/s/${build.shareId}/badge.json`)
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    assert.deepEqual(res.json(), {
      schemaVersion: 1,
      label: 'Build main',
      message: 'PASSING',
      color: '#15803d',
      labelColor: '#555555',
      cacheSeconds: 300,
    })
    assert.equal(res.headers['cache-control'], 'public, no-cache')
    const again = await get(`/s/${build.shareId}/badge.json`, {
      'if-none-match': String(res.headers.etag),
    })
    assert.equal(again.statusCode, 304)
  })

  it('what it says, shields.io draws as statusd does', async () => {
    const { label, message, color, labelColor } = (
      await get(`/s/${build.shareId}/badge.json`)
    ).json()
    assert.equal(
      makeBadge({ label, message, color, labelColor }),
      (await get(`/s/${build.shareId}/badge.svg`)).body,
    )
  })

  it("takes ?label= and ?style= (passed on as shields.io's style)", async () => {
    const res = await get(`/s/${build.shareId}/badge.json?label=CI&style=for-the-badge&v=3`)
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().label, 'CI')
    assert.equal(res.json().style, 'for-the-badge')
  })

  it('a stale status: "<value> · stale", grey', async () => {
    const s = await createStatus(t, owner, 'probe', {
      name: 'Probe',
      value: 'UP',
      accessType: 'public',
      staleAfter: 60,
    })
    // stale without waiting: its silence is moved back into the past in storage
    await t.database.db
      .updateTable('statuses')
      .set({ stale_at: '2000-01-01T00:00:00.000Z' })
      .where('id', '=', s.id)
      .execute()
    const body = (await get(`/s/${s.shareId}/badge.json`)).json()
    assert.equal(body.message, 'UP · stale')
    assert.equal(body.color, '#475569')
  })

  it('a private or unknown share id: 404 in the error shape of the API, never cached', async () => {
    for (const shareId of [hidden.shareId, 'zzzzzzzz']) {
      const res = await get(`/s/${shareId}/badge.json`)
      assert.equal(res.statusCode, 404)
      assert.match(String(res.headers['content-type']), /^application\/json/)
      const body = res.json()
      assert.equal(body.errorCode, 'notFound')
      assert.equal(body.requestId, res.headers['x-request-id'])
      assert.ok(!res.body.includes('HIDDEN'))
      assert.equal(res.headers['cache-control'], 'no-cache, max-age=0')
    }
  })

  it('an unknown style: 400 validationError naming style', async () => {
    const res = await get(`/s/${build.shareId}/badge.json?style=round`)
    assert.equal(res.statusCode, 400)
    assert.equal(res.json().errorCode, 'validationError')
    assert.deepEqual(
      res.json().errors.map((e: { field: string }) => e.field),
      ['style'],
    )
  })

  it('is in the OpenAPI document, with the styles as an enum', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json()
    const op = doc.paths['/s/{shareId}/badge.json'].get
    assert.equal(op.operationId, 'getBadgeEndpoint')
    assert.deepEqual(op.security, [])
    const style = op.parameters.find((p: { name: string }) => p.name === 'style')
    assert.deepEqual(style.schema.enum, [...BADGE_STYLES])
    assert.equal(
      op.responses['200'].content['application/json'].schema.$ref,
      '#/components/schemas/BadgeEndpoint',
    )
  })
})
