import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { makeApp } from '../helpers/app.ts'

// docs/app.md#how-it-is-built: the app's files (dist/app) carry a hash of their content in
// their names and are cached for good, sent in the compressed form the build made when the
// browser takes it; the service worker lives at /sw.js and is always revalidated.

const DIST = path.resolve(import.meta.dirname, '../../dist/app')
// either of JavaScript's names (RFC 9239); a module script takes both
const JAVASCRIPT = /^(text|application)\/javascript; charset=utf-8$/
const build = JSON.parse(readFileSync(path.join(DIST, 'build.json'), 'utf8')) as { js: string }

describe('the app’s files', () => {
  it('a hashed file is cached for good and sent as Brotli, gzip or as it is, as the browser takes', async (t) => {
    const app = await makeApp(t)
    const original = readFileSync(path.join(DIST, build.js))
    const url = `/app/${build.js}`
    for (const [accept, encoding, decode] of [
      ['gzip, deflate, br', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
      ['identity', undefined, (body: Buffer) => body],
    ] as const) {
      const res = await app.request(null, 'GET', url, undefined, { 'accept-encoding': accept })
      assert.equal(res.statusCode, 200, String(accept))
      assert.equal(res.headers['content-encoding'], encoding, String(accept))
      assert.deepEqual(decode(res.rawPayload), original, String(accept))
      assert.match(String(res.headers['content-type']), JAVASCRIPT)
      assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable')
      assert.equal(res.headers['x-content-type-options'], 'nosniff')
      assert.match(String(res.headers.vary), /accept-encoding/i)
    }
  })

  it('a file answers 304 to the ETag it was sent with', async (t) => {
    const app = await makeApp(t)
    const first = await app.request(null, 'GET', '/app/icon.svg')
    assert.equal(first.statusCode, 200)
    assert.equal(first.headers['cache-control'], 'public, max-age=86400', 'no hash: a day')
    const etag = String(first.headers.etag)
    const again = await app.request(null, 'GET', '/app/icon.svg', undefined, {
      'if-none-match': etag,
    })
    assert.equal(again.statusCode, 304)
  })

  it('the service worker is at /sw.js, always revalidated, and not under /app/', async (t) => {
    const app = await makeApp(t)
    const sw = await app.request(null, 'GET', '/sw.js', undefined, { 'accept-encoding': 'br' })
    assert.equal(sw.statusCode, 200)
    assert.equal(sw.headers['cache-control'], 'no-cache')
    assert.equal(sw.headers['content-encoding'], 'br')
    assert.match(String(sw.headers['content-type']), JAVASCRIPT)
    for (const url of ['/app/sw.js', '/app/build.json', `/app/${build.js}.br`, '/app/nosuch.js']) {
      const res = await app.request(null, 'GET', url)
      assert.equal(res.statusCode, 404, url)
      assert.equal(res.json().errorCode, 'notFound', url)
    }
  })
})
