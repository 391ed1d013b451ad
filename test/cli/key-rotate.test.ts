import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, it } from 'node:test'
import { buildApp } from '../../src/app.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { DEFAULT_PLANS } from '../../src/modules/plans/plans.ts'
import { json, run } from '../helpers/cli.ts'

// `statusd key rotate <keyId> [--grace SECONDS]`: the admin CLI's rotation, on a temp SQLite
// file; the keys it prints are tried against the API on the same file.

const saved = process.env.DATABASE_URL
let dir: string

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-cli-rotate-'))
  process.env.DATABASE_URL = `sqlite:${path.join(dir, 'statusd.db')}`
})
after(() => {
  if (saved === undefined) delete process.env.DATABASE_URL
  else process.env.DATABASE_URL = saved
  fs.rmSync(dir, { recursive: true, force: true })
})

async function authStatus(key: string): Promise<number> {
  const app = await buildApp({
    database: createDatabase(process.env.DATABASE_URL as string),
    plans: DEFAULT_PLANS,
  })
  try {
    return (
      await app.inject({ method: 'GET', url: '/v1/checkAuth', headers: { 'service-api-key': key } })
    ).statusCode
  } finally {
    await app.close()
  }
}

it('key rotate <keyId> --json: a new key that works, the old one revoked', async () => {
  const user = await json('user', 'add', '--name', 'Rita')
  const old = await json('key', 'create', '--user', user.id, '--label', 'ci')
  const rotated = await json('key', 'rotate', old.id)
  assert.match(rotated.key, /^sdk_[A-Za-z0-9]{40}$/)
  assert.equal(rotated.userId, user.id)
  assert.equal(rotated.label, 'ci')
  assert.equal(rotated.replaced.id, old.id)
  assert.equal(typeof rotated.replaced.revokedAt, 'string')
  assert.equal(await authStatus(old.key), 401)
  assert.equal(await authStatus(rotated.key), 200)
})

it('key rotate --grace 600: the old key works on, expiring within the grace period', async () => {
  const user = await json('user', 'add', '--name', 'Sam')
  const old = await json('key', 'create', '--user', user.id)
  const rotated = await json('key', 'rotate', old.id, '--grace', '600')
  assert.equal(rotated.replaced.revokedAt, null)
  assert.ok(Date.parse(rotated.replaced.expiresAt) <= Date.now() + 600_000)
  assert.equal(await authStatus(old.key), 200)
  assert.equal(await authStatus(rotated.key), 200)
})

it('key rotate without --json prints the new key once, with the old key state', async () => {
  const user = await json('user', 'add', '--name', 'Tia')
  const old = await json('key', 'create', '--user', user.id)
  const r = await run('key', 'rotate', old.id)
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, new RegExp(`rotated key ${old.id}`))
  assert.match(r.stdout, /The old key is revoked\./)
  assert.match(r.stdout, /shown only now/)
  assert.match(r.stdout, /^\s+sdk_[A-Za-z0-9]{40}$/m)
})

it('key rotate errors: a revoked key, a missing key, a bad --grace, no key id', async () => {
  const user = await json('user', 'add', '--name', 'Uma')
  const old = await json('key', 'create', '--user', user.id)
  await json('key', 'revoke', old.id)
  const revoked = await run('key', 'rotate', old.id)
  assert.equal(revoked.code, 1)
  assert.match(revoked.stderr, /revoked or expired/)
  const missing = await run('key', 'rotate', 'nosuchkey')
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /no key nosuchkey/)
  const bad = await run('key', 'rotate', old.id, '--grace', 'soon')
  assert.equal(bad.code, 2)
  assert.match(bad.stderr, /--grace must be a whole number/)
  const tooLong = await run('key', 'rotate', old.id, '--grace', '90000')
  assert.equal(tooLong.code, 1)
  assert.match(tooLong.stderr, /grace period must be 0 to 86400 seconds/)
  const none = await run('key', 'rotate')
  assert.equal(none.code, 2)
  assert.match(none.stderr, /key rotate needs a key id/)
})
