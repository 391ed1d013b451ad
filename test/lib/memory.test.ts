import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'

// docs/performance.md#cold-start-and-memory: what the PATCH path never needs loads at its
// first use, not at start. A child process (the test runner's own has loaded everything
// other tests use) starts an app on a database made before, as at every start but the
// first, writes a status, then uses each feature once.
const url = (path: string) => pathToFileURL(new URL(path, import.meta.url).pathname).href
const child = `
import module from 'node:module'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
const loaded = new Set()
module.registerHooks({
  load(url, context, next) {
    loaded.add(url)
    return next(url, context)
  },
})
const packages = () =>
  ['nodemailer', 'undici', '@simplewebauthn/server', 'web-push', 'piscina'].filter((name) =>
    [...loaded].some((u) => u.includes(\`/node_modules/\${name}/\`)),
  )
const { makeApp } = await import(${JSON.stringify(url('../helpers/app.ts'))})
const { scriptLifetime } = await import(${JSON.stringify(url('../helpers/cleanup.ts'))})
const { createDatabase } = await import(${JSON.stringify(url('../../src/db/create-database.ts'))})
const { migrateToLatest } = await import(${JSON.stringify(url('../../src/db/migrate.ts'))})
const { insertSettingIfAbsent } = await import(${JSON.stringify(url('../../src/modules/notifications/service-settings.repository.ts'))})
const { createMailer } = await import(${JSON.stringify(url('../../src/lib/mailer.ts'))})
const { OutboundClient } = await import(${JSON.stringify(url('../../src/lib/outbound.ts'))})

const t = scriptLifetime()
const databaseUrl = \`sqlite:\${join(mkdtempSync(join(tmpdir(), 'statusd-memory-')), 'db.sqlite')}\`
// what the first start left: the service's VAPID key pair
const first = createDatabase(databaseUrl)
await migrateToLatest(first.db)
const pair = { publicKey: 'BPublicKeyMadeAtTheFirstStart', privateKey: 'privateKey' }
await insertSettingIfAbsent(first.db, 'vapid', JSON.stringify(pair), new Date().toISOString())
await first.close()
const before = packages()

const { request, user } = await makeApp(t, { databaseUrl })
const alice = await user()
const made = await request(alice, 'POST', '/v1/status-keys/build', { value: 'red' })
const set = await request(alice, 'PATCH', \`/v1/status/\${made.json().id}\`, { value: 'green' })
createMailer('smtp://127.0.0.1:9', 'statusd <statusd@example.org>')
new OutboundClient()
const atStart = packages()

const options = await request(null, 'POST', '/v1/auth/passkey/options', {})
const afterPasskey = packages()
await t.end()
process.stdout.write(JSON.stringify({ before, atStart, set: set.statusCode, options: options.statusCode, afterPasskey }))
`

describe('memory (docs/performance.md#cold-start-and-memory)', () => {
  it('e-mail, webhooks, browser push, passkeys and the password threads load at first use, and that use works', () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', child], {
      encoding: 'utf8',
      env: { ...process.env, TEST_ENGINE: 'sqlite' },
    })
    assert.equal(run.status, 0, run.stderr)
    const result = JSON.parse(run.stdout)
    assert.deepEqual(result.before, [])
    assert.deepEqual(result.atStart, [], 'a start and a PATCH load none of them')
    assert.equal(result.set, 200)
    assert.equal(result.options, 200, 'the first passkey request, which loads the library')
    assert.deepEqual(result.afterPasskey, ['@simplewebauthn/server'])
  })
})
