import assert from 'node:assert/strict'
import { it } from 'node:test'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { runScenarios, type Scenario, type ScenarioContext } from '../helpers/scenarios.ts'

// Routing after parsing (hardening finding 7): an unknown route was answered after its body
// was read — 415 for a form, 400 for bad JSON, 413 for a large body. The route is found
// before the body is read (docs/api.md#order-of-checks): an unknown route is 404 `notFound`
// whatever it carries, and a known route still checks its body.

const setup = async (t: Lifetime): Promise<ScenarioContext> => {
  const app = await makeApp(t)
  return { t: app, users: { owner: await app.user() }, vars: {} }
}

const TWO_MB = 'x'.repeat(2 * 1024 * 1024)
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

const unknown: Scenario[] = [
  {
    name: 'PUT on a status key (no such method there) with a form body → 404, not 415',
    method: 'PUT',
    url: '/v1/status-keys/room-4',
    body: 'value=FREE',
    headers: FORM,
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'POST /nope with malformed JSON → 404, not 400',
    method: 'POST',
    url: '/nope',
    body: '{bad',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'POST /nope with a 2 MB body → 404, not 413',
    method: 'POST',
    url: '/nope',
    body: TWO_MB,
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'PATCH on an unknown /v1 path with a 2 MB form body → 404',
    method: 'PATCH',
    url: '/v1/nope/deeper',
    body: TWO_MB,
    headers: FORM,
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'an unknown route without an API key, with malformed JSON → 404, before authentication',
    as: null,
    method: 'POST',
    url: '/v1/nope',
    body: '{bad',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
  {
    name: 'DELETE on a read-only route with malformed JSON → 404',
    method: 'DELETE',
    url: '/v1/checkAuth',
    body: '{bad',
    expectStatus: 404,
    expectErrorCode: 'notFound',
  },
]

const known: Scenario[] = [
  {
    name: 'a known route with a form body → 415',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: 'value=FREE',
    headers: FORM,
    expectStatus: 415,
    expectErrorCode: 'unsupportedMediaType',
  },
  {
    name: 'a known route with malformed JSON → 400 invalidJson',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: '{bad',
    expectStatus: 400,
    expectErrorCode: 'invalidJson',
  },
  {
    name: 'a known route with a 2 MB body → 413',
    method: 'POST',
    url: '/v1/status-keys/room-4',
    body: TWO_MB,
    expectStatus: 413,
    expectErrorCode: 'payloadTooLarge',
  },
]

runScenarios('routing after parsing: an unknown route is 404 whatever its body', setup, unknown)
runScenarios('… and a known route still checks its body', setup, known)

it('routing after parsing: an unknown path under the share pages with a body → the HTML not-found page, not 413', async (t) => {
  const app = await makeApp(t)
  for (const body of ['{bad', TWO_MB]) {
    const res = await app.request(null, 'POST', '/s/abcdefgh/nope', body)
    assert.equal(res.statusCode, 404, res.body.slice(0, 200))
    assert.match(String(res.headers['content-type']), /^text\/html/)
  }
})
