import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { extract } from 'tar'
import { ensureFirstUser } from '../../src/modules/users/first-user.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { backedUpDatabase } from './databases.ts'

// docs/api.md#backups: GET /v1/admin/backups, GET /v1/admin/backups/:name,
// POST /v1/admin/backups — operators only.

/** An app on a database that can be backed up, BACKUP_DIR set (or not), and its operator. */
async function withBackups(
  t: Lifetime,
  { dir = true } = {},
): Promise<{ app: TestApp; operator: TestUser; user: TestUser; folder: string }> {
  const source = await backedUpDatabase(t)
  const app = await makeApp(t, {
    databaseUrl: source.url,
    deps: {
      backups: dir ? { dir: source.dir, url: source.url, everyMs: 86_400_000, keep: 7 } : null,
    },
  })
  const first = await ensureFirstUser(app.database.db, app.app.plans)
  assert.ok(first)
  return {
    app,
    operator: { id: first.user.id, key: first.key },
    user: await app.user(),
    folder: source.dir,
  }
}

describe(`the admin API of backups [${TEST_ENGINE}]`, () => {
  it('an operator takes a backup now (201, Location), lists it with the schedule, and downloads it whole', async (t) => {
    const { app, operator, folder } = await withBackups(t)
    const empty = await app.request(operator, 'GET', '/v1/admin/backups')
    assert.equal(empty.statusCode, 200, empty.body)
    assert.deepEqual(empty.json(), { enabled: true, every: '24h', keep: 7, backups: [] })

    const taken = await app.request(operator, 'POST', '/v1/admin/backups')
    assert.equal(taken.statusCode, 201, taken.body)
    const backup = taken.json()
    assert.equal(taken.headers.location, `/v1/admin/backups/${backup.name}`)
    assert.equal(backup.engine, TEST_ENGINE)
    assert.match(backup.sha256, /^[0-9a-f]{64}$/)

    const listed = await app.request(operator, 'GET', '/v1/admin/backups')
    assert.deepEqual(listed.json().backups, [backup])

    const download = await app.request(operator, 'GET', `/v1/admin/backups/${backup.name}`)
    assert.equal(download.statusCode, 200)
    assert.equal(download.headers['content-type'], 'application/x-tar')
    assert.equal(download.headers['content-disposition'], `attachment; filename="${backup.name}"`)
    assert.deepEqual(download.rawPayload, readFileSync(join(folder, backup.name)))
    assert.equal(download.rawPayload.length, backup.bytes)
    const unpacked = mkdtempSync(join(tmpdir(), 'statusd-download-'))
    const file = join(unpacked, backup.name)
    writeFileSync(file, download.rawPayload)
    await extract({ file, cwd: unpacked })
    const manifest = JSON.parse(readFileSync(join(unpacked, 'manifest.json'), 'utf8'))
    const data = readFileSync(join(unpacked, manifest.data.file))
    assert.equal(createHash('sha256').update(data).digest('hex'), backup.sha256)

    const events = await app.database.db
      .selectFrom('security_events')
      .select(['kind', 'actor_id'])
      .where('kind', 'like', 'admin.backup%')
      .orderBy('at')
      .execute()
    assert.deepEqual(events, [
      { kind: 'admin.backupTaken', actor_id: operator.id },
      { kind: 'admin.backupDownloaded', actor_id: operator.id },
    ])
  })

  it('a name that is not a backup in the folder is 404, whatever it points at', async (t) => {
    const { app, operator, folder } = await withBackups(t)
    writeFileSync(join(folder, 'notes.txt'), 'not a backup')
    for (const name of [
      'statusd-20261129-030000-abcdef.tar',
      'notes.txt',
      '..%2F..%2Fetc%2Fpasswd',
      '%2E%2E',
    ]) {
      const res = await app.request(operator, 'GET', `/v1/admin/backups/${name}`)
      assert.equal(res.statusCode, 404, `${name}: ${res.body}`)
      assert.equal(res.json().errorCode, 'notFound')
    }
  })

  it('without BACKUP_DIR the list is empty and says so, and taking one is 409', async (t) => {
    const { app, operator } = await withBackups(t, { dir: false })
    const list = await app.request(operator, 'GET', '/v1/admin/backups')
    assert.deepEqual(list.json(), { enabled: false, every: null, keep: null, backups: [] })
    const take = await app.request(operator, 'POST', '/v1/admin/backups')
    assert.equal(take.statusCode, 409, take.body)
    assert.match(take.json().message, /set BACKUP_DIR/)
  })

  it('only an operator may list, download or take backups (403 forbidden), and nobody anonymous (401)', async (t) => {
    const { app, operator, user } = await withBackups(t)
    const { name } = (await app.request(operator, 'POST', '/v1/admin/backups')).json()
    for (const [method, url] of [
      ['GET', '/v1/admin/backups'],
      ['GET', `/v1/admin/backups/${name}`],
      ['POST', '/v1/admin/backups'],
    ] as const) {
      const refused = await app.request(user, method, url)
      assert.equal(refused.statusCode, 403, `${method} ${url}: ${refused.body}`)
      const anonymous = await app.request(null, method, url)
      assert.equal(anonymous.statusCode, 401, `${method} ${url}: ${anonymous.body}`)
    }
    const list = await app.request(operator, 'GET', '/v1/admin/backups')
    assert.equal(list.json().backups.length, 1, 'the refused requests took none')
  })
})
