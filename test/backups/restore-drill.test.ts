import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { bounded } from '../helpers/bounded.ts'
import type { Lifetime } from '../helpers/cleanup.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { backedUpDatabase, statusdOn } from './databases.ts'

// The restore drill (docs/operations.md#the-restore-drill): back up while writers write,
// restore into an empty database, and the API checks pass on the restored copy, with every
// write acknowledged before the backup began.

const WRITERS = 4

/** An app on the database at `url`, listening on a port of its own. */
async function serving(t: Lifetime, url: string): Promise<{ app: TestApp; base: string }> {
  const app = await makeApp(t, { databaseUrl: url })
  await app.app.listen({ port: 0, host: '127.0.0.1' })
  return { app, base: `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}` }
}

const as = (user: TestUser) => ({
  'service-api-key': user.key,
  'content-type': 'application/json',
})

/** Every history entry of a status, following the pages' `Link: <…>; rel="next"`. */
async function wholeHistory(base: string, user: TestUser, id: string): Promise<string[]> {
  const values: string[] = []
  let next: string | undefined = `/v1/status/${id}/history?limit=1000`
  while (next) {
    const response: Response = await fetch(new URL(next, base), { headers: as(user) })
    assert.equal(response.status, 200)
    values.push(...((await response.json()) as { value: string }[]).map((e) => e.value))
    next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1]
  }
  return values
}

describe(`the restore drill [${TEST_ENGINE}]`, () => {
  it('a backup taken under write load restores with every write acknowledged before it began, and the restored service passes the API checks', async (t) => {
    const source = await backedUpDatabase(t)
    const original = await serving(t, source.url)
    const user = await original.app.user()

    // writers: each sets its own status to 1, 2, 3, … and records what was acknowledged
    const acknowledged = Array.from({ length: WRITERS }, () => 0)
    let stop = false
    let backupDone = false
    let afterBackup = 0
    let enough: () => void = () => {}
    const warmedUp = new Promise<void>((resolve) => {
      enough = resolve
    })
    const writer = async (i: number) => {
      for (let n = 1; !stop; n++) {
        const response = await fetch(`${original.base}/v1/status-keys/writer-${i}`, {
          method: 'POST',
          headers: as(user),
          body: JSON.stringify({ value: String(n) }),
        })
        assert.ok(
          response.status === 200 || response.status === 201,
          `write ${n}: ${response.status}`,
        )
        await response.arrayBuffer()
        acknowledged[i] = n
        if (acknowledged.every((a) => a >= 5)) enough()
        if (backupDone && ++afterBackup >= WRITERS * 5) stop = true
      }
    }
    const writers = Array.from({ length: WRITERS }, (_, i) => writer(i))
    await bounded('every writer acknowledged five writes', warmedUp)

    // what was acknowledged when the backup began: all of it must be in the backup
    const before = [...acknowledged]
    const backup = await statusdOn(source.url, ['backup', '--to', source.dir, '--json'])
    backupDone = true
    assert.equal(backup.code, 0, backup.err)
    await bounded('the writers to stop', Promise.all(writers))
    assert.ok(afterBackup >= WRITERS * 5, 'writes went on after the backup')
    await original.app.close()

    const target = await source.lose()
    const restore = await statusdOn(target, ['restore', JSON.parse(backup.out).path, '--json'])
    assert.equal(restore.code, 0, restore.err)

    const restored = await serving(t, target)
    // the API checks, on the restored copy: the key authenticates, every status is there
    // with at least the value acknowledged before the backup, its history has each of
    // those writes, and the service writes on
    const check = await fetch(`${restored.base}/v1/checkAuth`, { headers: as(user) })
    assert.equal(check.status, 200)
    const list = await fetch(`${restored.base}/v1/user/status`, { headers: as(user) })
    assert.equal(list.status, 200)
    assert.equal(((await list.json()) as unknown[]).length, WRITERS)
    for (let i = 0; i < WRITERS; i++) {
      const read = await fetch(`${restored.base}/v1/status-keys/writer-${i}`, { headers: as(user) })
      assert.equal(read.status, 200)
      const status = (await read.json()) as { id: string; value: string; changeCount: number }
      assert.ok(
        Number(status.value) >= (before[i] as number),
        `writer-${i}: ${status.value}, acknowledged before the backup ${before[i]}`,
      )
      const history = new Set(await wholeHistory(restored.base, user, status.id))
      for (let n = 1; n <= (before[i] as number); n++)
        assert.ok(history.has(String(n)), `writer-${i}'s write ${n} is in the restored history`)
      const write = await fetch(`${restored.base}/v1/status-keys/writer-${i}`, {
        method: 'POST',
        headers: as(user),
        body: JSON.stringify({ value: 'restored' }),
      })
      assert.equal(write.status, 200)
      const written = (await write.json()) as { value: string; changeCount: number }
      assert.equal(written.value, 'restored')
      assert.equal(written.changeCount, status.changeCount + 1)
    }
  })
})
