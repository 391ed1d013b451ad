import assert from 'node:assert/strict'
import { before, beforeEach, describe, it, type TestContext } from 'node:test'
import type { InjectOptions } from 'fastify'
import type { TestApp, TestUser } from './app.ts'
import { type Lifetime, suiteLifetime } from './cleanup.ts'

/** What a scenario table runs against: a fresh app, named users and named values. */
export interface ScenarioContext {
  t: TestApp
  users: Record<string, TestUser | null>
  /** Substituted for `{name}` in urls, string bodies and header values. */
  vars: Record<string, string>
}

/** One row of an endpoint scenario table (after PocketBase's ApiScenario). */
export interface Scenario {
  /** The documented rule the scenario proves: the test's name. */
  name: string
  /** A key of `users`; `null` sends no key. Default `owner`. */
  as?: string | null
  method: InjectOptions['method']
  url: string
  /** JSON-encoded unless a string (sent raw). */
  body?: unknown
  /** `undefined`: the header is not sent at all (a body without `content-type`). */
  headers?: Record<string, string | undefined>
  expectStatus: number
  expectErrorCode?: string
  /** Extra checks on the parsed body (and the context, to read state back). */
  expect?: (
    // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON body of whatever shape the route answers
    body: any,
    ctx: ScenarioContext,
    res: { headers: Record<string, unknown> },
  ) => void | Promise<void>
}

const fill = (text: string, vars: Record<string, string>) =>
  text.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = vars[name]
    if (value === undefined) throw new Error(`scenario variable {${name}} is not set`)
    return value
  })

/** The methods that only read (RFC 9110 safe methods the API serves). */
const READS = new Set(['GET', 'HEAD'])

/**
 * Runs each scenario as its own test on a freshly set-up context; `setup` gets the test's
 * context for `makeApp(t)`, so the app goes when the scenario ends.
 */
export function runScenarios(
  title: string,
  setup: (t: Lifetime) => Promise<ScenarioContext>,
  scenarios: Scenario[],
): void {
  scenarioSuite(title, setup, scenarios, false)
}

/**
 * runScenarios for a table whose rows only read (GET, HEAD; checked): one context, set up
 * before the first row and gone after the last, serves them all, since a read leaves the
 * world as the next row expects to find it.
 */
export function runReadOnlyScenarios(
  title: string,
  setup: (t: Lifetime) => Promise<ScenarioContext>,
  scenarios: Scenario[],
): void {
  for (const s of scenarios)
    assert.ok(READS.has(String(s.method)), `${s.name}: a read-only table's rows only read`)
  scenarioSuite(title, setup, scenarios, true)
}

function scenarioSuite(
  title: string,
  setup: (t: Lifetime) => Promise<ScenarioContext>,
  scenarios: Scenario[],
  shared: boolean,
): void {
  describe(title, () => {
    let ctx: ScenarioContext
    if (shared) {
      const suite = suiteLifetime()
      before(async () => {
        ctx = await setup(suite)
      })
    } else {
      // note: beforeEach is given the context of the test it runs for
      beforeEach(async (t) => {
        ctx = await setup(t as TestContext)
      })
    }
    for (const s of scenarios) {
      it(s.name, async () => {
        const as = s.as === undefined ? 'owner' : s.as
        const user = as === null ? null : ctx.users[as]
        if (as !== null && user === undefined) throw new Error(`scenario user ${as} is not set`)
        const body = typeof s.body === 'string' ? fill(s.body, ctx.vars) : s.body
        const res = await ctx.t.request(
          user ?? null,
          s.method,
          fill(s.url, ctx.vars),
          body,
          s.headers &&
            Object.fromEntries(
              Object.entries(s.headers).map(([k, v]) => [
                k,
                v === undefined ? v : fill(v, ctx.vars),
              ]),
            ),
        )
        const parsed =
          res.body.length > 0 && /json/.test(String(res.headers['content-type']))
            ? res.json()
            : undefined
        assert.equal(res.statusCode, s.expectStatus, `status (body: ${res.body.slice(0, 400)})`)
        if (s.expectStatus >= 400) {
          assert.equal(typeof parsed?.message, 'string', 'error body has a message')
          assert.equal(typeof parsed?.requestId, 'string', 'error body has a requestId')
          // the error body (docs/api.md#errors): exactly { message, errorCode, errors?,
          // requestId }, the id the header names
          assert.equal(parsed?.requestId, res.headers['x-request-id'], 'requestId is x-request-id')
          assert.deepEqual(
            Object.keys(parsed ?? {})
              .filter((k) => k !== 'errors')
              .sort(),
            ['errorCode', 'message', 'requestId'],
            'the error body has the documented fields and no others',
          )
          if (s.expectErrorCode) assert.equal(parsed?.errorCode, s.expectErrorCode)
        }
        await s.expect?.(parsed, ctx, res)
      })
    }
  })
}
