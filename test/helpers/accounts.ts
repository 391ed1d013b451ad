import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import type { TestApp } from './app.ts'

/** A password that passes the rules (docs/accounts.md#users). */
export const GOOD_PASSWORD = 'plum tree at dusk 42'

/**
 * A password of `n` astral characters (two UTF-16 units, one code point each), all different
 * enough that the strength estimator passes it: a test of the lengths alone.
 */
export const astralPassword = (n: number): string =>
  Array.from({ length: n }, (_, i) => String.fromCodePoint(0x1f400 + ((i * 37) % 250))).join('')

/** The `statusd_session` cookie a response sets (its value), or undefined. */
export function sessionCookieOf(res: {
  headers: Record<string, unknown>
}): { value: string; attributes: string } | undefined {
  const header = res.headers['set-cookie']
  const all = Array.isArray(header) ? header : header === undefined ? [] : [String(header)]
  const line = all.find((c: string) => c.startsWith('statusd_session='))
  if (line === undefined) return undefined
  const [pair = '', ...rest] = line.split(';')
  return { value: pair.slice('statusd_session='.length), attributes: rest.join(';').trim() }
}

/** Injects a request with a session cookie (and, for a write, the service's own origin). */
export function asSession(
  t: TestApp,
  cookie: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.request(null, method, url, body, {
    cookie: `statusd_session=${cookie}`,
    ...(method !== 'GET' && { 'sec-fetch-site': 'same-origin' }),
    ...headers,
  })
}

/** Signs up (SIGNUP=open) and returns the new user's id and session cookie. */
export async function signUpUser(
  t: TestApp,
  { email = 'ada@example.com', name = 'Ada', password = GOOD_PASSWORD } = {},
): Promise<{ id: string; cookie: string }> {
  const res = await t.request(null, 'POST', '/v1/auth/signup', { email, name, password })
  assert.equal(res.statusCode, 201, res.body)
  const cookie = sessionCookieOf(res)
  assert.ok(cookie, 'sign-up sets the session cookie')
  return { id: res.json().id, cookie: cookie.value }
}

/** Signs in and returns the session cookie. */
export async function signInUser(
  t: TestApp,
  { email = 'ada@example.com', password = GOOD_PASSWORD } = {},
): Promise<string> {
  const res = await t.request(null, 'POST', '/v1/auth/login', { email, password })
  assert.equal(res.statusCode, 200, res.body)
  const cookie = sessionCookieOf(res)
  assert.ok(cookie, 'sign-in sets the session cookie')
  return cookie.value
}
