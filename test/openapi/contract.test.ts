import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { contractOf, type SeenResponse } from '../helpers/contract.ts'

// docs/architecture.md#tests: every response the tests receive is checked against the document
// (test/helpers/contract.ts). What the check refuses, on a document of two operations.

const document = {
  openapi: '3.1.0',
  paths: {
    '/v1/things/{id}': {
      get: {
        responses: {
          200: {
            description: 'A thing',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
            headers: { ETag: { $ref: '#/components/headers/ETag' } },
          },
          304: { description: 'Not modified' },
          '4XX': {
            description: 'An error',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            headers: { 'Retry-After': { schema: { type: 'integer', minimum: 0 } } },
          },
        },
      },
    },
    '/v1/things/latest': {
      get: {
        responses: {
          200: {
            description: 'As text',
            content: { 'text/plain': { schema: { type: 'string', maxLength: 5 } } },
          },
        },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        properties: { id: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
        required: ['id', 'at'],
        additionalProperties: false,
        example: { id: 'a', at: '2026-01-01T00:00:00.000Z' },
      },
      Error: {
        type: 'object',
        properties: { errorCode: { type: 'string' } },
        required: ['errorCode'],
      },
    },
    headers: { ETag: { schema: { type: 'string', pattern: '^"' } } },
  },
}
const contract = contractOf(JSON.stringify(document))

const json = { 'content-type': 'application/json; charset=utf-8' }
const seen = (response: Partial<SeenResponse>): string[] | undefined =>
  contract.problems({
    method: 'GET',
    url: '/v1/things/a',
    status: 200,
    headers: json,
    body: '{"id":"a","at":"2026-01-01T00:00:00.000Z"}',
    ...response,
  })

describe('the contract check of test responses', () => {
  it('passes what the document declares: a status, its content type, a body matching its schema', () => {
    assert.deepEqual(seen({}), [])
    assert.deepEqual(seen({ status: 304, headers: {}, body: '' }), [])
    assert.deepEqual(seen({ status: 404, body: '{"errorCode":"notFound"}' }), [])
    assert.deepEqual(seen({ method: 'HEAD', body: '' }), [])
  })

  it('refuses a status the operation does not declare', () => {
    assert.match(String(seen({ status: 500, body: '{"errorCode":"internal"}' })), /status 500/)
  })

  it('refuses a content type the status does not declare, and a body where it declares none', () => {
    assert.match(String(seen({ headers: { 'content-type': 'text/html' } })), /text\/html/)
    assert.match(String(seen({ status: 304, body: '{}' })), /declares none/)
  })

  it('refuses a body that does not match its schema, named by its path', () => {
    assert.match(String(seen({ body: '{"id":"a"}' })), /must have required property 'at'/)
    assert.match(String(seen({ body: '{"id":"a","at":"soon"}' })), /body\/at must match format/)
    assert.match(String(seen({ body: 'not json' })), /not JSON/)
    const text = { url: '/v1/things/latest', headers: { 'content-type': 'text/plain' } }
    assert.deepEqual(seen({ ...text, body: 'FREE' }), [])
    assert.match(String(seen({ ...text, body: 'OCCUPIED' })), /must NOT have more than 5/)
  })

  it('refuses a declared header that does not match its schema, and a documented header sent undeclared', () => {
    assert.match(String(seen({ headers: { ...json, etag: 'W/x' } })), /header ETag/)
    const limited = {
      status: 429,
      body: '{"errorCode":"x"}',
      headers: { ...json, 'retry-after': '5' },
    }
    assert.deepEqual(seen(limited), [])
    assert.match(String(seen({ headers: { ...json, 'retry-after': '5' } })), /retry-after is sent/)
  })

  it('leaves what the document does not describe alone', () => {
    assert.equal(seen({ url: '/assets/app.js', status: 418 }), undefined)
    assert.equal(seen({ method: 'DELETE', status: 418 }), undefined)
  })
})
