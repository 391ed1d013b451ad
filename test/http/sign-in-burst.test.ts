import assert from 'node:assert/strict'
import { EventEmitter, once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { ACCOUNT_FAILURES, ADDRESS_FAILURES } from '../../src/modules/users/login-throttle.ts'
import { type PasswordHasher, scryptHasherWith } from '../../src/modules/users/passwords.ts'
import { GOOD_PASSWORD, signUpUser } from '../helpers/accounts.ts'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'

// docs/accounts.md#locking-an-attacker-out and docs/security.md (finding 1, the throttle race):
// throttles count an attempt before its password is judged, so a burst of concurrent sign-ins
// judges no more passwords than the limit and the rest get 429 at once. Over a real socket.

const BURST = 40

// note: real scrypt at a cost that keeps a burst quick; the subject is how many are judged
const cheap = scryptHasherWith({ ln: 4, r: 8, p: 1 })

/**
 * A hasher that counts the passwords it is asked to judge and holds every verdict until
 * `release`: no judgement ends, and so nothing is counted after one, while the burst arrives.
 */
function heldHasher() {
  const events = new EventEmitter()
  let judged = 0
  let release = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  const hasher: PasswordHasher = {
    ...cheap,
    async verify(stored, password) {
      judged += 1
      events.emit('change')
      await held
      return cheap.verify(stored, password)
    },
  }
  return { hasher, events, judged: () => judged, release }
}

async function burstApp(ctx: Lifetime) {
  const held = heldHasher()
  const t = await makeApp(ctx, {
    deps: { signup: 'open', clock: testClock(), passwordHasher: held.hasher },
  })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  return { t, base, held }
}

interface Answer {
  status: number
  retryAfter: string | null
  body: { errorCode?: string; requestId?: string }
}

/**
 * Sends the requests all at once; once every one has either been answered 429 or had its
 * password taken for judging, the verdicts are released. Answers in the order sent.
 */
async function burst(
  held: ReturnType<typeof heldHasher>,
  send: (i: number) => Promise<Response>,
): Promise<{ judged: number; answers: Answer[] }> {
  let refused = 0
  const answers = Array.from({ length: BURST }, async (_, i) => {
    const res = await send(i)
    const answer: Answer = {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: (await res.json()) as Answer['body'],
    }
    if (res.status === 429) {
      refused += 1
      held.events.emit('change')
    }
    return answer
  })
  while (held.judged() + refused < BURST) await once(held.events, 'change')
  const judged = held.judged()
  held.release()
  return { judged, answers: await Promise.all(answers) }
}

const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base, ...headers },
    body: JSON.stringify(body),
  })

function assertRefusedAtOnce(answers: Answer[], judged: number) {
  const refused = answers.filter((a) => a.status === 429)
  assert.equal(refused.length, BURST - judged, 'every sign-in not judged is refused')
  for (const a of refused) {
    assert.equal(a.body.errorCode, 'rateLimited')
    assert.match(a.retryAfter ?? '', /^\d+$/)
    assert.ok(Number(a.retryAfter) > 0)
  }
}

describe('throttles count an attempt before its password is judged (finding 1)', () => {
  it(`a burst of ${BURST} concurrent sign-ins for one account from one address, the right password among them, judges at most ${ACCOUNT_FAILURES} passwords; the rest get 429 at once`, async (ctx) => {
    const { t, base, held } = await burstApp(ctx)
    await signUpUser(t)
    const { judged, answers } = await burst(held, (i) =>
      post(base, '/v1/auth/login', {
        email: 'ada@example.com',
        password: i === BURST / 2 ? GOOD_PASSWORD : `wrong guess number ${i}`,
      }),
    )
    assert.equal(judged, ACCOUNT_FAILURES)
    assertRefusedAtOnce(answers, judged)
    const verdicts = answers.filter((a) => a.status !== 429).map((a) => a.status)
    assert.equal(verdicts.length, ACCOUNT_FAILURES)
    assert.ok(verdicts.every((s) => s === 401 || s === 200))
    assert.ok(verdicts.filter((s) => s === 200).length <= 1)
  })

  it(`a burst of ${BURST} concurrent sign-ins for as many accounts from one address judges at most ${ADDRESS_FAILURES} passwords; the rest get 429 at once`, async (ctx) => {
    const { base, held } = await burstApp(ctx)
    const { judged, answers } = await burst(held, (i) =>
      post(base, '/v1/auth/login', {
        email: `someone${i}@example.com`,
        password: 'stuffed password 123',
      }),
    )
    assert.equal(judged, ADDRESS_FAILURES)
    assertRefusedAtOnce(answers, judged)
    assert.ok(answers.filter((a) => a.status !== 429).every((a) => a.status === 401))
  })

  it(`a burst of ${BURST} password changes with a wrong current password, from a stolen session, judges at most ${ACCOUNT_FAILURES}; the rest get 429 at once`, async (ctx) => {
    const { t, base, held } = await burstApp(ctx)
    const { cookie } = await signUpUser(t)
    const { judged, answers } = await burst(held, (i) =>
      fetch(`${base}/v1/user`, {
        method: 'PATCH',
        headers: {
          'content-type': 'application/json',
          origin: base,
          cookie: `statusd_session=${cookie}`,
        },
        body: JSON.stringify({
          password: 'a brand new passphrase',
          currentPassword: `wrong guess number ${i}`,
        }),
      }),
    )
    assert.equal(judged, ACCOUNT_FAILURES)
    assertRefusedAtOnce(answers, judged)
    assert.ok(answers.filter((a) => a.status !== 429).every((a) => a.status === 403))
  })
})
