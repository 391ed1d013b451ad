import assert from 'node:assert/strict'
import { request } from 'node:http'
import { test } from 'node:test'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type ScenarioContext } from '../helpers/scenarios.ts'

// docs/api.md#validation-rules: names and values need a visible character and hold no control
// characters; descriptions may hold line breaks. These are the Unicode corners of that rule.

async function withOneStatus(ctx: Lifetime): Promise<ScenarioContext> {
  const t = await makeApp(ctx)
  const owner = await t.user()
  const res = await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'OCCUPIED' })
  return { t, users: { owner }, vars: { statusId: res.json().id } }
}

const rejected = (name: string, body: Record<string, string>, field: string) => ({
  name,
  method: 'PATCH' as const,
  url: '/v1/status/{statusId}',
  body,
  expectStatus: 400,
  expectErrorCode: 'validationError',
  expect: (res: { errors: { field: string }[] }) =>
    assert.ok(res.errors.some((e) => e.field === field)),
})

runScenarios('text rules at the Unicode edges', withOneStatus, [
  rejected(
    'a value of only zero-width spaces has no visible character',
    { value: '\u200b\u200b' },
    'value',
  ),
  rejected(
    'a name of Hangul fillers (U+3164, default-ignorable) has no visible character',
    { name: '\u3164\u3164\u3164' },
    'name',
  ),
  rejected(
    'a value of a lone combining grapheme joiner (U+034F) has no visible character',
    { value: '\u034f' },
    'value',
  ),
  rejected('a lone variation selector (U+FE0F) is not a value', { value: '\ufe0f' }, 'value'),
  rejected('a combining accent without a base is not a value', { value: '\u0301' }, 'value'),
  rejected('the blank Braille pattern (U+2800) is not a value', { value: '\u2800\u2800' }, 'value'),
  {
    name: 'a combining accent on a visible base is a fine value',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: 'cafe\u0301 \u2764\ufe0f' },
    expectStatus: 200,
    expect: (body) => assert.equal(body.value, 'cafe\u0301 \u2764\ufe0f'),
  },
  rejected(
    'a line separator (U+2028) is a line break, not allowed in a name',
    { name: 'A\u2028B name' },
    'name',
  ),
  rejected(
    'a paragraph separator (U+2029) is not allowed in a value',
    { value: 'A\u2029B' },
    'value',
  ),
  rejected(
    'a C1 control character (U+0085) is not allowed in a description',
    { description: 'a\u0085b' },
    'description',
  ),
  {
    name: 'an emoji sequence with zero-width joiners is a fine value',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { value: '👨\u200d👩\u200d👧' },
    expectStatus: 200,
    expect: (body) => assert.equal(body.value, '👨\u200d👩\u200d👧'),
  },
  {
    name: 'a description may hold tabs and line breaks',
    method: 'PATCH',
    url: '/v1/status/{statusId}',
    body: { description: 'line 1\r\n\tline 2' },
    expectStatus: 200,
  },
  {
    name: 'a status key of 600 characters is 400 invalidStatusKey, not a router error',
    method: 'POST',
    url: `/v1/status-keys/${'k'.repeat(600)}`,
    body: { value: 'ON', name: 'Long' },
    expectStatus: 400,
    expectErrorCode: 'invalidStatusKey',
  },
])

// note: over a real socket, since inject normalises `%2E` segments away before routing
test('status keys "." and ".." are refused (clients rewrite them out of URLs)', async (ctx) => {
  const t = await makeApp(ctx)
  const owner = await t.user()
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = t.app.server.address() as { port: number }
  for (const key of ['%2E', '%2E%2E']) {
    const body = JSON.stringify({ value: 'ON', name: 'Dots' })
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: `/v1/status-keys/${key}`,
          headers: { 'service-api-key': owner.key, 'content-type': 'application/json' },
        },
        (res) => {
          let data = ''
          res.on('data', (d) => (data += d))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }))
        },
      )
      req.on('error', reject)
      req.end(body)
    })
    assert.equal(res.status, 400, res.body)
    assert.equal(JSON.parse(res.body).errorCode, 'invalidStatusKey')
  }
})
