import assert from 'node:assert/strict'
import { it } from 'node:test'
import { redactHeaderValue, redactRequestUrl } from '../../src/lib/redact.ts'

const KEY = 'sdk_0123456789abcdefghijABCDEFGHIJ0123456789'

it('masks a key sent in the query string, under any secret-looking name', () => {
  assert.equal(
    redactRequestUrl(`/v1/checkAuth?service-api-key=${KEY}`),
    '/v1/checkAuth?service-api-key=[redacted]',
  )
  assert.equal(
    redactRequestUrl('/v1/x?api%5Fkey=abc&token=t&a=1'),
    '/v1/x?api%5Fkey=[redacted]&token=[redacted]&a=1',
  )
})

it('masks key-shaped text anywhere in the URL', () => {
  assert.equal(redactRequestUrl(`/v1/status-keys/${KEY}`), '/v1/status-keys/sdk_[redacted]')
  assert.equal(redactRequestUrl(`/v1/x?q=${KEY}`), '/v1/x?q=sdk_[redacted]')
})

it('masks a key percent-encoded anywhere in the URL', () => {
  const encoded = `sdk%5F${KEY.slice(4)}`
  assert.equal(redactRequestUrl(`/v1/user/status?x=${encoded}`), '/v1/user/status?x=[redacted]')
  assert.equal(redactRequestUrl(`/v1/x?${encoded}`), '/v1/x?[redacted]')
  assert.equal(
    redactRequestUrl(`/v1/status-keys/%73dk_${KEY.slice(4)}`),
    '/v1/status-keys/[redacted]',
  )
  assert.equal(redactRequestUrl(`/v1/x?q=a%20${encoded}&limit=2`), '/v1/x?q=[redacted]&limit=2')
  // malformed encoding next to a key is masked all the same
  assert.equal(redactRequestUrl(`/v1/x?q=%ZZ${KEY}`), '/v1/x?q=%ZZsdk_[redacted]')
  // … also when the key is percent-encoded beside it, or encoded twice
  assert.equal(redactRequestUrl(`/v1/status/x%ZZ%73dk_${KEY.slice(4)}`), '/v1/status/[redacted]')
  assert.equal(
    redactRequestUrl(`/v1/checkAuth?q=%ZZ%73dk_${KEY.slice(4)}`),
    '/v1/checkAuth?q=[redacted]',
  )
  assert.equal(redactRequestUrl(`/v1/share/%2573dk_${KEY.slice(4)}`), '/v1/share/[redacted]')
})

it('leaves ordinary URLs alone', () => {
  for (const url of [
    '/v1/user/status?limit=5&cursor=abc',
    '/v1/status/abc',
    '/healthz',
    '/x?flag',
    '/v1/status-keys/a%2D1?x=caf%C3%A9',
    '/v1/x?a=&=b&&',
  ])
    assert.equal(redactRequestUrl(url), url)
})

it('a logged header value that may hold a key is masked whole; others stay as they came', () => {
  for (const value of [
    KEY,
    `${KEY}.example.com`,
    KEY.toUpperCase(),
    KEY.slice(4),
    `v=${KEY.slice(4)}`,
    `sdk%5F${KEY.slice(4)}`,
  ])
    assert.equal(redactHeaderValue(value), '[redacted]', value)
  for (const value of ['status.example.com', '127.0.0.1:8080', '1.x', '>=2.0.0', 'sdk'])
    assert.equal(redactHeaderValue(value), value)
  assert.equal(redactHeaderValue(undefined), undefined)
})
