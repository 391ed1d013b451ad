import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { it } from 'node:test'
import { CookieJar } from '../helpers/cookie-jar.ts'
import { startServer } from '../helpers/processes.ts'

// docs/accounts.md#users: passwords are never logged. A real `statusd serve` at LOG_LEVEL=debug
// and trace, signing up, in (right and wrong) and out, changing the password: no password,
// session token or token hash in any line it writes.

for (const level of ['debug', 'trace'])
  it(`passwords never logged: LOG_LEVEL=${level}, sign-up, sign-in, a wrong password, a password change, sign-out`, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-accounts-logs-'))
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
    const server = await startServer(t, path.join(dir, 'statusd.db'), {
      LOG_LEVEL: level,
      SIGNUP: 'open',
    })
    const password = 'violet kestrel 8 over the moor'
    const wrong = 'violet kestrel 9 over the moor'
    const next = 'amber heron 3 under the bridge'
    const jar = new CookieJar()
    const status = async (res: Promise<Response>) => {
      const r = await res
      await r.arrayBuffer()
      return r.status
    }
    const email = 'ada@example.com'
    assert.equal(
      await status(
        jar.fetch(server.url, '/v1/auth/signup', {
          method: 'POST',
          json: { email, name: 'Ada', password },
        }),
      ),
      201,
    )
    const tokens = [jar.get('statusd_session') as string]
    assert.equal(
      await status(
        jar.fetch(server.url, '/v1/auth/login', {
          method: 'POST',
          json: { email, password: wrong },
        }),
      ),
      401,
    )
    assert.equal(
      await status(
        jar.fetch(server.url, '/v1/auth/login', { method: 'POST', json: { email, password } }),
      ),
      200,
    )
    tokens.push(jar.get('statusd_session') as string)
    assert.equal(
      await status(
        jar.fetch(server.url, '/v1/user', {
          method: 'PATCH',
          json: { password: next, currentPassword: password },
        }),
      ),
      200,
    )
    // a wrong current password, and an invalid new one: errors are logged, the passwords not
    assert.equal(
      await status(
        jar.fetch(server.url, '/v1/user', {
          method: 'PATCH',
          json: { password: `${wrong} again`, currentPassword: wrong },
        }),
      ),
      403,
    )
    assert.equal(await status(jar.fetch(server.url, '/v1/auth/logout', { method: 'POST' })), 204)
    assert.equal((await server.stop('SIGTERM')).code, 0, server.output())

    const lines = [...server.stdout, ...server.stderr]
    assert.ok(
      server.logs().some((l) => l.msg === 'request completed'),
      'requests were logged at this level',
    )
    const secrets = [
      password,
      wrong,
      next,
      `${wrong} again`,
      ...tokens,
      ...tokens.map((token) => createHash('sha256').update(token).digest('hex')),
    ]
    for (const line of lines)
      for (const secret of secrets)
        assert.ok(
          !line.includes(secret),
          `a log line holds a secret (${secret.slice(0, 6)}…): ${line}`,
        )
  })
