import assert from 'node:assert/strict'
import { scrypt } from 'node:crypto'
import { EventEmitter, once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import { ACCOUNT_FAILURES, ADDRESS_FAILURES } from '../../src/modules/users/login-throttle.ts'
import {
  HashPool,
  type PasswordHasher,
  type ScryptJob,
  scryptHasherWith,
} from '../../src/modules/users/passwords.ts'
import { POOL_RETRY_AFTER_S } from '../../src/modules/users/thread-pool.ts'
import { GOOD_PASSWORD, signUpUser } from '../helpers/accounts.ts'
import { makeApp } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { testClock } from '../helpers/clock.ts'

// docs/accounts.md#locking-an-attacker-out and docs/security.md (finding 1, the throttle race):
// throttles count an attempt before its password is judged, so a burst of concurrent sign-ins
// judges no more passwords than the limit and the rest get 429 at once. And (finding 4) the
// hash pool's queue: full, a sign-in is refused at once. Over a real socket.

const BURST = 40

// note: real scrypt at a cost that keeps a burst quick, on a pool with room for the whole
// burst: the subject here is how many the throttle lets be judged, not the pool's limit
const roomy = new HashPool({ threads: 2, queue: BURST })
after(() => roomy.close())
const cheap = scryptHasherWith({ ln: 4, r: 8, p: 1 }, roomy)

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

describe('password hashing runs on a bounded pool of its own (finding 4)', () => {
  it('with the pool and its short queue full, a sign-in is answered 429 tooManyRequests with Retry-After and the error body at once; it costs the account no attempt', async (ctx) => {
    // a pool of 1 thread and a queue of 1, whose hashes are held until released
    const events = new EventEmitter()
    let holding = false
    let computing = 0
    let release = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    const compute = (job: ScryptJob) =>
      new Promise<Uint8Array>((resolve, reject) =>
        scrypt(job.password, job.salt, job.length, job, (err, key) =>
          err ? reject(err) : resolve(key),
        ),
      )
    const pool = new HashPool({
      threads: 1,
      queue: 1,
      async run(job) {
        if (holding) {
          computing += 1
          events.emit('change')
          await released
        }
        return compute(job)
      },
    })
    const t = await makeApp(ctx, {
      deps: {
        signup: 'open',
        clock: testClock(),
        passwordHasher: scryptHasherWith({ ln: 4, r: 8, p: 1 }, pool),
      },
    })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    await signUpUser(t)
    const wrong = (i: number) =>
      post(base, '/v1/auth/login', { email: 'ada@example.com', password: `wrong guess ${i}` })

    holding = true
    const sent = 4
    let refused = 0
    const answers = Array.from({ length: sent }, async (_, i) => {
      const res = await wrong(i)
      const answer = {
        status: res.status,
        type: res.headers.get('content-type'),
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as { errorCode?: string; message?: string },
      }
      if (res.status === 429) {
        refused += 1
        events.emit('change')
      }
      return answer
    })
    while (computing + refused < sent) await once(events, 'change')
    assert.equal(computing, 2, 'one hash computes, one waits')
    holding = false
    release()
    const all = await Promise.all(answers)
    const busy = all.filter((a) => a.status === 429)
    assert.equal(busy.length, 2)
    for (const a of busy) {
      assert.equal(a.body.errorCode, 'tooManyRequests')
      assert.match(a.type ?? '', /^application\/json/)
      assert.equal(a.retryAfter, String(POOL_RETRY_AFTER_S))
      assert.ok(a.body.message)
    }
    assert.deepEqual(
      all.filter((a) => a.status !== 429).map((a) => a.status),
      [401, 401],
    )
    // two attempts judged, two given back: three more are judged before the account's limit
    for (let i = 0; i < ACCOUNT_FAILURES - 2; i++) assert.equal((await wrong(100 + i)).status, 401)
    const limited = await wrong(200)
    assert.equal(limited.status, 429)
    assert.equal(((await limited.json()) as { errorCode: string }).errorCode, 'rateLimited')
  })
})
