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
