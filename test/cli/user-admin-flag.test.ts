import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createDatabase } from '../../src/db/create-database.ts'
import { json, run, useCliDatabase } from '../helpers/cli.ts'

// `statusd user set --admin / --no-admin` (docs/operations.md#operators): the operator at the
// server's shell makes a user an operator or no longer one; each change is in that account's
// security log, and the CLI says when no operator is left.

useCliDatabase('statusd-cli-admin-')

/** The security log's entries about one user, oldest first, from the CLI's database. */
async function eventsOf(userId: string) {
  const database = createDatabase(process.env.DATABASE_URL as string)
  try {
    return await database.db
      .selectFrom('security_events')
      .select(['kind', 'actor_id', 'detail'])
      .where('user_id', '=', userId)
      .orderBy('at')
      .execute()
  } finally {
    await database.close()
  }
}

describe('user set --admin / --no-admin', () => {
  it('grants and takes the flag; user list shows it; each change is logged once', async () => {
    const ada = await json('user', 'add', '--name', 'Ada', '--email', 'ada@example.com')
    assert.equal(ada.admin, false, 'a user the CLI adds is no operator')

    const granted = await json('user', 'set', 'ada@example.com', '--admin')
    assert.equal(granted.admin, true)
    const listed = await run('user', 'list')
    assert.match(listed.stdout, /Ada <ada@example\.com> {2}plan=free {2}verified {2}admin\n/)
    // granting again changes nothing, and logs nothing
    assert.equal((await json('user', 'set', ada.id, '--admin')).admin, true)

    const taken = await run('user', 'set', ada.id, '--no-admin')
    assert.equal(taken.code, 0, taken.stderr)
    assert.match(taken.stdout, /^updated user .* verified\n/)
    assert.match(
      taken.stdout,
      /no user is an operator now: `statusd user set <id> --admin` makes one/,
      'the last operator gone: the CLI says how to make one',
    )
    assert.deepEqual(
      (await eventsOf(ada.id)).map((e) => [e.kind, e.actor_id, JSON.parse(e.detail ?? 'null')]),
      [
        ['adminGranted', null, { by: 'cli' }],
        ['adminRevoked', null, { by: 'cli' }],
      ],
    )
  })

  it('another operator left: no note', async () => {
    await json('user', 'add', '--name', 'Bo', '--email', 'bo@example.com')
    await json('user', 'add', '--name', 'Cy', '--email', 'cy@example.com')
    await json('user', 'set', 'bo@example.com', '--admin')
    await json('user', 'set', 'cy@example.com', '--admin')
    const r = await run('user', 'set', 'cy@example.com', '--no-admin')
    assert.equal(r.code, 0, r.stderr)
    assert.doesNotMatch(r.stdout, /no user is an operator/)
  })

  it('user set with nothing to change names --admin and --no-admin', async () => {
    await json('user', 'add', '--name', 'Di', '--email', 'di@example.com')
    const r = await run('user', 'set', 'di@example.com')
    assert.equal(r.code, 2)
    assert.match(r.stderr, /--admin or --no-admin/)
  })
})
