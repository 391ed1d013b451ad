import assert from 'node:assert/strict'
import { before, it } from 'node:test'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import type { Plan } from '../../src/modules/plans/plans.ts'
import { makeApp, TEST_PLANS, type TestApp, type TestUser } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { reportSeedOnFailure, runSeed } from '../helpers/seed.ts'

// Property-based fuzzing (fast-check) of every text field — a status's name, value and
// description, an API key's label — with the Unicode that hides or disguises text:
// noncharacters, default-ignorable code points, full-width forms, lone surrogates, ideographic
// full stops, beside ordinary letters, emoji and marks (docs/api.md#validation-rules).
// Properties: such text is either refused (400 and the error body naming the field) or stored
// and read back exactly as sent; never a 5xx; and on a plan without links, a link disguised
// with any of these is refused like the plain link (402, docs/api.md#plans).
//
// FUZZ_RUNS sets the scale (npm test: 3000, of which a sixth here; `npm run fuzz`: 100 000).
// TEST_SEED (or FUZZ_SEED) replays a run, FUZZ_PATH with it one failing case.

const RUNS = Math.max(100, Math.round(Number(process.env.FUZZ_RUNS || 3000) / 6))
const SEED = runSeed()
const PATH = process.env.FUZZ_PATH || undefined
const replay = { seed: SEED, ...(PATH !== undefined && { path: PATH }) }

let t: TestApp
let pro: TestUser
let free: TestUser
let statusId = ''

const suite = suiteLifetime()
before(async () => {
  // the free plan's gates without its rate limit, which thousands of cases would reach
  const plans = { ...TEST_PLANS, free: { ...(TEST_PLANS.free as Plan), requestsPerMinute: null } }
  t = await makeApp(suite, { plans })
  pro = await t.user({ plan: 'unlimited' })
  free = await t.user({ plan: 'free' })
  const res = await t.request(pro, 'POST', '/v1/status-keys/fuzz', { value: 'ON' })
  statusId = res.json().id
})

// ---- the Unicode classes ---------------------------------------------------------------

const codePoint = (min: number, max: number) =>
  fc.integer({ min, max }).map((c) => String.fromCodePoint(c))

/** U+FDD0–U+FDEF and the last two code points of every plane. */
const noncharacter = fc.oneof(
  codePoint(0xfdd0, 0xfdef),
  fc
    .tuple(fc.integer({ min: 0, max: 16 }), fc.boolean())
    .map(([plane, last]) => String.fromCodePoint(plane * 0x10000 + (last ? 0xffff : 0xfffe))),
)
/** Default-ignorable code points, from every block that has them. */
const IGNORABLES = [
  '\u00ad',
  '\u034f',
  '\u061c',
  '\u115f',
  '\u1160',
  '\u17b4',
  '\u180b',
  '\u180e',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u200e',
  '\u2060',
  '\u2064',
  '\u206f',
  '\u3164',
  '\ufe00',
  '\ufe0f',
  '\ufeff',
  '\uffa0',
  '\u{1bca0}',
  '\u{1d173}',
  '\u{e0001}',
  '\u{e0100}',
  '\u{e0fff}',
]
const ignorable = fc.constantFrom(...IGNORABLES)
/** Full-width and half-width forms (U+FF01–U+FFEE), ideographic space and full stops. */
const fullWidth = fc.oneof(codePoint(0xff01, 0xffee), fc.constantFrom('\u3000', '\u3002'))
const loneSurrogate = codePoint(0xd800, 0xdfff)
const ordinary = fc.oneof(
  fc.constantFrom('a', 'Z', '7', ' ', '.', '/', ':', '@', '-', '🟢', '👩‍💻', 'e\u0301', 'ß', 'ﬁ'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }),
)
const piece = fc.oneof(
  { weight: 2, arbitrary: noncharacter },
  { weight: 3, arbitrary: ignorable },
  { weight: 3, arbitrary: fullWidth },
  { weight: 1, arbitrary: loneSurrogate },
  { weight: 4, arbitrary: ordinary },
)
/** Text of these pieces, sometimes all of one class. */
const oddText = fc.oneof(
  fc.array(piece, { minLength: 1, maxLength: 14 }).map((p) => p.join('')),
  fc.array(ignorable, { minLength: 1, maxLength: 4 }).map((p) => p.join('')),
  fc.array(fullWidth, { minLength: 1, maxLength: 12 }).map((p) => p.join('')),
)

// ---- links in disguise -----------------------------------------------------------------

const LINKS = [
  'example.com/x',
  'https://evil.com',
  'http://rooms.example.org/desk-1',
  'ops@example.org',
  'www.example.dev',
  'status.example.app/room-4',
]
/** The full-width form of a printable ASCII character (U+FF01–U+FF5E). */
const wide = (ch: string) => String.fromCodePoint((ch.codePointAt(0) as number) + 0xfee0)
/** One character of a link as a look-alike: itself, its full-width form, a different dot. */
const disguise = (ch: string) =>
  fc
    .tuple(
      ch === '.'
        ? fc.constantFrom('.', '\u3002', '\uff0e', '\uff61')
        : fc.constantFrom(ch, wide(ch)),
      fc.option(ignorable, { freq: 3 }),
    )
    .map(([shown, hidden]) => shown + (hidden ?? ''))
/** A link with look-alikes in it, in a sentence. */
const disguisedLink = fc
  .constantFrom(...LINKS)
  .chain((link) => fc.tuple(...[...link].map(disguise)).map((parts) => parts.join('')))
  .map((link) => `see ${link} now`)

// ---- the properties --------------------------------------------------------------------

/** A 400 validationError in the error body, naming the field. */
function assertRefused(res: LightMyRequestResponse, field: string, show: string): void {
  assert.equal(res.statusCode, 400, show)
  assert.match(String(res.headers['content-type']), /^application\/json/, show)
  const error = res.json()
  assert.equal(error.errorCode, 'validationError', show)
  assert.equal(typeof error.message, 'string', show)
  assert.equal(error.requestId, res.headers['x-request-id'], show)
  assert.ok(
    error.errors.some((e: { field: string }) => e.field === field),
    `names ${field}: ${show}`,
  )
}

const STATUS_FIELDS = ['name', 'value', 'description'] as const
const textCase = fc.record({
  field: fc.constantFrom(...STATUS_FIELDS, 'label'),
  text: oddText,
})

const statuses = new Map<number, number>()
const count = (res: LightMyRequestResponse) =>
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)

it(`fuzz: ${RUNS} texts of noncharacters, default-ignorables, full-width forms and lone surrogates in every text field — refused with the error body, or stored and read back unchanged`, async (ctx) => {
  reportSeedOnFailure(ctx, SEED)
  await fc.assert(
    fc.asyncProperty(textCase, async ({ field, text }) => {
      const show = `${field} = ${JSON.stringify(text)}`
      if (field === 'label') {
        const res = await t.request(pro, 'POST', '/v1/user/api-keys', { label: text })
        count(res)
        assert.ok(res.statusCode < 500, `never a 5xx: ${show} → ${res.body}`)
        if (res.statusCode !== 201) return assertRefused(res, 'label', show)
        assert.equal(res.json().label, text, `the answer: ${show}`)
        const listed = (await t.request(pro, 'GET', '/v1/user/api-keys')).json()
        const key = listed.find((k: { id: string }) => k.id === res.json().id)
        assert.equal(key?.label, text, `read back: ${show}`)
        // keeps the number of working keys under the limit of 100
        const revoked = await t.request(pro, 'DELETE', `/v1/user/api-keys/${res.json().id}`)
        assert.equal(revoked.statusCode, 204)
        return
      }
      const res = await t.request(pro, 'PATCH', `/v1/status/${statusId}`, { [field]: text })
      count(res)
      assert.ok(res.statusCode < 500, `never a 5xx: ${show} → ${res.body}`)
      if (res.statusCode !== 200) return assertRefused(res, field, show)
      assert.equal(res.json()[field], text, `the answer: ${show}`)
      const read = await t.request(pro, 'GET', `/v1/status/${statusId}`)
      assert.equal(read.json()[field], text, `read back: ${show}`)
    }),
    { numRuns: RUNS, ...replay, endOnFailure: false },
  )
  ctx.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
  // both outcomes were reached: the classes are neither all refused nor all stored
  assert.ok(statuses.has(200) && statuses.has(400), JSON.stringify([...statuses]))
})

it(`fuzz: ${Math.max(50, Math.round(RUNS / 2))} links disguised with full-width forms, default-ignorables and ideographic full stops — a plan without links refuses every one (402), a plan with links stores it as sent`, async (ctx) => {
  reportSeedOnFailure(ctx, SEED)
  await fc.assert(
    fc.asyncProperty(disguisedLink, async (description) => {
      const show = JSON.stringify(description)
      const res = await t.request(free, 'POST', '/v1/status-keys/linked', {
        value: 'ON',
        description,
      })
      assert.equal(res.statusCode, 402, `no link bypass on the free plan: ${show} → ${res.body}`)
      assert.equal(res.json().errorCode, 'planFeatureUnavailable')
      assert.deepEqual(res.json().errors, [
        { field: 'description', message: 'requires a plan with links in descriptions' },
      ])
      const stored = await t.request(pro, 'PATCH', `/v1/status/${statusId}`, { description })
      assert.equal(stored.statusCode, 200, `${show} → ${stored.body}`)
      assert.equal(stored.json().description, description, 'stored as sent')
    }),
    { numRuns: Math.max(50, Math.round(RUNS / 2)), ...replay, endOnFailure: false },
  )
})
