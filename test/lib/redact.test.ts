import assert from 'node:assert/strict'
import { it } from 'node:test'
import { redactUrl } from '../../src/lib/redact.ts'

const KEY = 'sdk_0123456789abcdefghijABCDEFGHIJ0123456789'

it('masks a key sent in the query string, under any secret-looking name', () => {
  assert.equal(
    redactUrl(`/v1/checkAuth?service-api-key=${KEY}`),
    '/v1/checkAuth?service-api-key=[redacted]',
  )
  assert.equal(
    redactUrl('/v1/x?api%5Fkey=abc&token=t&a=1'),
    '/v1/x?api%5Fkey=[redacted]&token=[redacted]&a=1',
  )
})

it('masks key-shaped text anywhere in the URL', () => {
  assert.equal(redactUrl(`/v1/status-keys/${KEY}`), '/v1/status-keys/sdk_[redacted]')
  assert.equal(redactUrl(`/v1/x?q=${KEY}`), '/v1/x?q=sdk_[redacted]')
})

it('leaves ordinary URLs alone', () => {
  for (const url of ['/v1/user/status?limit=5&cursor=abc', '/v1/status/abc', '/healthz', '/x?flag'])
    assert.equal(redactUrl(url), url)
})
