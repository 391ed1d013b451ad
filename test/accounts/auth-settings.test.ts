import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createMailer } from '../../src/lib/mailer.ts'
import { makeApp } from '../helpers/app.ts'

// `GET /v1/auth/settings` (docs/api.md#sign-up-sign-in-and-sessions): how people join this
// service, for anyone to read before signing up: who may sign up (SIGNUP) and whether mail is
// sent (SMTP_URL), so the app says "by invitation" before a form is filled in, and mentions a
// mailed link only when one is mailed.

// note: the mailer connects only to send; nothing is sent here
const MAILER = () => createMailer('smtp://127.0.0.1:9', 'statusd <statusd@example.com>')

describe('how people join: GET /v1/auth/settings', () => {
  const scenarios = [
    { signup: 'invite', mail: false },
    { signup: 'invite', mail: true },
    { signup: 'open', mail: false },
    { signup: 'open', mail: true },
  ] as const
  for (const { signup, mail } of scenarios)
    it(`says SIGNUP=${signup} and e-mail ${mail ? 'on' : 'off'}, to anyone, without a key`, async (ctx) => {
      const t = await makeApp(ctx, { deps: { signup, ...(mail && { mailer: MAILER() }) } })
      const res = await t.request(null, 'GET', '/v1/auth/settings')
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), { signup, email: mail })
    })
})
