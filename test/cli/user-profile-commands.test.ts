import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { json, run, useCliDatabase } from '../helpers/cli.ts'

// `statusd user add --email`, `user set --name/--email` (docs/operations.md#admin-cli): the
// rules the API holds names and addresses to, for what the operator types too.

useCliDatabase('statusd-cli-profile-')

describe('user add --email', () => {
  it('an address that is not one is refused in one clear line, exit 1, and no user is made', async () => {
    for (const bad of ['notanemail', 'a@b', '@example.com', 'a b@example.com', 'a@exa mple.com']) {
      const r = await run('user', 'add', '--name', 'X', '--email', bad)
      assert.equal(r.code, 1, bad)
      assert.equal(r.stdout, '')
      assert.equal(
        r.stderr,
        `statusd: e-mail "${bad}" must be an e-mail address, like name@example.com\n`,
      )
    }
    const r = await run('user', 'add', '--name', 'X', '--email', 'notanemail', '--json')
    assert.equal(r.code, 1)
    assert.match(JSON.parse(r.stderr).error, /must be an e-mail address/)
    assert.deepEqual(await json('user', 'list'), [])
  })

  it('an address another user has, in any case, is refused', async () => {
    const first = await json('user', 'add', '--name', 'Ann', '--email', 'Ann@Example.com')
    assert.equal(first.email, 'Ann@Example.com', 'the address is kept as typed')
    const r = await run('user', 'add', '--name', 'Other', '--email', 'ann@EXAMPLE.COM')
    assert.equal(r.code, 1)
    assert.equal(r.stderr, 'statusd: a user with e-mail Ann@Example.com exists\n')
    // found by its address in any case
    const set = await json('user', 'set', 'ANN@example.com', '--plan', 'pro')
    assert.equal(set.id, first.id)
  })
})

describe('user set --name / --email', () => {
  it('--name renames within 1–60 code points of single-line text; more or less is refused', async () => {
    const user = await json('user', 'add', '--name', 'admin')
    const renamed = await json('user', 'set', user.id, '--name', '  Zoë 🟢  ')
    assert.equal(renamed.name, 'Zoë 🟢', 'trimmed')
    assert.equal((await json('user', 'set', user.id, '--name', '🟢'.repeat(60))).name.length, 120)
    for (const [bad, why] of [
      ['🟢'.repeat(61), 'must be at most 60 characters'],
      ['   ', 'must be at least 1 characters'],
      ['a\nb', 'must contain a visible character and no control characters or noncharacters'],
      ['\u200b', 'must contain a visible character and no control characters or noncharacters'],
    ]) {
      const r = await run('user', 'set', user.id, '--name', bad as string)
      assert.equal(r.code, 1, JSON.stringify(bad))
      assert.equal(r.stderr, `statusd: name ${why}\n`)
    }
    const r = await run('user', 'add', '--name', 'x'.repeat(61))
    assert.equal(r.code, 1)
    assert.equal(r.stderr, 'statusd: name must be at most 60 characters\n')
  })

  it('--email sets a valid address no one else has (its own in another case is fine)', async () => {
    const user = await json('user', 'add', '--name', 'Bea', '--email', 'bea@example.com')
    const changed = await json('user', 'set', user.id, '--email', 'Bea@Example.com')
    assert.equal(changed.email, 'Bea@Example.com')
    let r = await run('user', 'set', user.id, '--email', 'ANN@example.com')
    assert.equal(r.code, 1)
    assert.equal(r.stderr, 'statusd: a user with e-mail Ann@Example.com exists\n')
    r = await run('user', 'set', user.id, '--email', 'notanemail')
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^statusd: e-mail "notanemail" must be an e-mail address/)
    const moved = await json('user', 'set', 'bea@example.com', '--email', 'bea@example.org')
    assert.equal(moved.email, 'bea@example.org')
  })

  it('user set with nothing to change is a usage error naming every option', async () => {
    const user = await json('user', 'add', '--name', 'Cy')
    const r = await run('user', 'set', user.id)
    assert.equal(r.code, 2)
    assert.match(
      r.stderr,
      /user set needs --name, --email, --plan, --verified, --unverified, --admin or --no-admin/,
    )
  })

  it('the help names user set --name/--email and user link', async () => {
    const set = await run('user', 'set', '--help')
    assert.equal(set.code, 0)
    assert.match(set.stdout, /^Usage: statusd user set \[options\] <id\|email>$/m)
    assert.match(set.stdout, /^ {2}--name <name> /m)
    assert.match(set.stdout, /^ {2}--email <email> /m)
    assert.match((await run('user', '--help')).stdout, /^ {2}link <id\|email> /m)
  })
})
