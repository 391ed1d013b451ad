import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { makeApp } from '../helpers/app.ts'

// Hardening finding 12, the smaller ones that show in a response: the share page's assets
// cached as immutable whatever their version, and the API explorer at /docs sent without
// a Content-Security-Policy.

describe('/s/assets/share.js?v=<anything> is cached as immutable', () => {
  it('only the URL with the content hash the pages link to is immutable; any other version revalidates', async (t) => {
    const app = await makeApp(t)
    // the not-found page links the same assets as every share page
    const page = (await app.request(null, 'GET', '/s/nosuchid')).body
    const linked = [...page.matchAll(/(?:href|src)="(\/s\/assets\/[^"?]+)\?v=([0-9a-f]+)"/g)]
    assert.deepEqual(linked.map((m) => m[1]).sort(), [
      '/s/assets/favicon.svg',
      '/s/assets/share.css',
      '/s/assets/share.js',
    ])
    for (const [, asset, hash] of linked) {
      const real = await app.request(null, 'GET', `${asset}?v=${hash}`)
      assert.equal(real.statusCode, 200)
      assert.match(String(real.headers['cache-control']), /immutable/, `${asset}?v=<its hash>`)
      for (const v of ['?v=anything', `?v=${hash}0`, '', `?v=${hash}&v=other`, '?v=']) {
        const res = await app.request(null, 'GET', `${asset}${v}`)
        assert.equal(res.statusCode, 200, `${asset}${v}`)
        assert.equal(res.body, real.body, 'the same content')
        const cache = String(res.headers['cache-control'])
        assert.doesNotMatch(cache, /immutable|max-age=[1-9]/, `${asset}${v}: ${cache}`)
        assert.match(cache, /no-cache/, `${asset}${v} revalidates`)
      }
    }
  })
})

describe('/docs sends no CSP/frame-ancestors', () => {
  it('the API explorer and everything it loads carry a Content-Security-Policy that forbids framing and inline script', async (t) => {
    const app = await makeApp(t)
    let page = await app.request(null, 'GET', '/docs')
    if (page.statusCode >= 300 && page.statusCode < 400)
      page = await app.request(
        null,
        'GET',
        new URL(String(page.headers.location), 'http://x/docs/').pathname,
      )
    assert.equal(page.statusCode, 200)
    assert.match(String(page.headers['content-type']), /text\/html/)
    const linked = [...page.body.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1] as string)
    assert.ok(linked.length >= 4, `the page loads its scripts and styles: ${linked.join(' ')}`)
    const urls = [
      '/docs',
      ...linked.map((u) => new URL(u, 'http://x/docs/').pathname),
      '/docs/json',
    ]
    for (const url of urls) {
      const res = await app.request(null, 'GET', url)
      assert.equal(res.statusCode, 200, url)
      const csp = String(res.headers['content-security-policy'])
      assert.match(csp, /frame-ancestors 'none'/, `${url}: ${csp}`)
      assert.match(csp, /default-src 'none'/, `${url}: ${csp}`)
      const scripts = /script-src ([^;]*)/.exec(csp)?.[1] ?? ''
      assert.doesNotMatch(
        scripts,
        /unsafe-inline|unsafe-eval|\*|https?:/,
        `${url}: only its own scripts`,
      )
    }
  })
})
