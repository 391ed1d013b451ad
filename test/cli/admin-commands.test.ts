import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { before, describe, it } from 'node:test'
import { buildApp } from '../../src/app.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { DEFAULT_PLANS } from '../../src/modules/plans/plans.ts'
import { json, run, useCliDatabase } from '../helpers/cli.ts'

// The admin CLI (docs/operations.md#admin-cli), run in-process through `main(argv, out, err)`
// exactly as bin/statusd.js runs it, on a temp SQLite file named by DATABASE_URL (loadConfig reads
// process.env). Each key the CLI prints is then tried against the API (buildApp on the same file,
// inject).

useCliDatabase('statusd-cli-')

/** Sends one request to the API on the CLI's database, with `key` in the seed's header. */
async function api(key: string, method: 'GET' | 'POST', url: string, body?: unknown) {
  const database = createDatabase(process.env.DATABASE_URL as string)
  const app = await buildApp({ database, plans: DEFAULT_PLANS })
  try {
    const res = await app.inject({
      method,
      url,
      headers: {
        'service-api-key': key,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    })
    return { status: res.statusCode, body: res.json() }
  } finally {
    await app.close()
  }
}

describe('statusd user …', () => {
  it('user add --json prints the new user with its id; defaults: plan free, verified', async () => {
    const user = await json('user', 'add', '--name', 'Alice', '--email', 'alice@example.com')
    assert.match(user.id, /^[\w-]{21}$/)
    assert.equal(user.name, 'Alice')
    assert.equal(user.email, 'alice@example.com')
    assert.equal(user.plan, 'free')
    assert.equal(user.authLevel, 'verified')
  })

  it('user add --plan P --unverified creates an unverified user on that plan', async () => {
    const user = await json('user', 'add', '--name', 'Bob', '--plan', 'pro', '--unverified')
    assert.equal(user.plan, 'pro')
    assert.equal(user.authLevel, 'authenticated')
    assert.equal(user.email, null)
  })

  it('user add without --json prints one human-readable line naming the id', async () => {
    const r = await run('user', 'add', '--name', 'Carol')
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /^created user [\w-]{21} {2}Carol {2}plan=free {2}verified\n$/)
  })

  it('user list --json lists every user in creation order', async () => {
    const users = await json('user', 'list')
    assert.deepEqual(
      users.map((u: { name: string }) => u.name),
      ['Alice', 'Bob', 'Carol'],
    )
    for (const u of users)
      assert.deepEqual(Object.keys(u).sort(), [
        'admin',
        'authLevel',
        'createdAt',
        'email',
        'id',
        'name',
        'plan',
      ])
  })

  it('user set <email> --plan P changes the plan; user set <id> --plan P too', async () => {
    const byEmail = await json('user', 'set', 'alice@example.com', '--plan', 'pro')
    assert.equal(byEmail.plan, 'pro')
    const byId = await json('user', 'set', byEmail.id, '--plan', 'free')
    assert.equal(byId.plan, 'free')
    assert.equal(byId.id, byEmail.id)
  })

  it("user set --unverified / --verified change what the user's key may do", async () => {
    const user = await json('user', 'add', '--name', 'Dave', '--email', 'dave@example.com')
    const { key } = await json('key', 'create', '--user', user.id)

    const down = await json('user', 'set', 'dave@example.com', '--unverified')
    assert.equal(down.authLevel, 'authenticated')
    let res = await api(key, 'POST', '/v1/status-keys/dave-1', { value: 'A' })
    assert.equal(res.status, 403)
    assert.equal(res.body.errorCode, 'notVerified')
    res = await api(key, 'GET', '/v1/checkAuth')
    assert.equal(res.status, 200, 'checkAuth works at either level')
    assert.equal(res.body.authLevel, 'authenticated')

    const up = await json('user', 'set', user.id, '--verified')
    assert.equal(up.authLevel, 'verified')
    res = await api(key, 'POST', '/v1/status-keys/dave-1', { value: 'A' })
    assert.equal(res.status, 201)
  })
})

describe('statusd key …', () => {
  let user: { id: string }
  let created: { id: string; key: string; [k: string]: unknown }

  before(async () => {
    user = await json('user', 'add', '--name', 'Erin', '--email', 'erin@example.com')
  })

  it('key create --user <email> --json prints { id, key } and the key works against the API', async () => {
    created = await json('key', 'create', '--user', 'erin@example.com', '--label', 'ci')
    assert.match(created.id, /^[\w-]{21}$/)
    assert.match(created.key, /^sdk_[A-Za-z0-9]{40}$/)
    assert.equal(created.label, 'ci')
    assert.equal(created.expiresAt, null)
    const res = await api(created.key, 'GET', '/v1/checkAuth')
    assert.equal(res.status, 200)
    assert.equal(res.body.userId, user.id)
    const write = await api(created.key, 'POST', '/v1/status-keys/room-4', { value: 'OCCUPIED' })
    assert.equal(write.status, 201)
  })

  it('key create --user <id> --expires ISO stores the expiry (UTC) and the key works', async () => {
    const k = await json(
      'key',
      'create',
      '--user',
      user.id,
      '--expires',
      '2099-06-30T12:00:00+02:00',
    )
    assert.equal(k.expiresAt, '2099-06-30T10:00:00.000Z')
    const day = await json('key', 'create', '--user', user.id, '--expires', '2099-12-31')
    assert.equal(day.expiresAt, '2099-12-31T00:00:00.000Z')
    assert.equal((await api(k.key, 'GET', '/v1/checkAuth')).status, 200)
  })

  it('key create without --json prints the key once, with a warning to store it', async () => {
    const r = await run('key', 'create', '--user', user.id)
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /shown only now/)
    assert.match(r.stdout, /^ {4}sdk_[A-Za-z0-9]{40}$/m)
  })

  it('key list --json lists the keys without the secret or its hash', async () => {
    const r = await run('key', 'list', '--user', 'erin@example.com', '--json')
    assert.equal(r.code, 0, r.stderr)
    const keys = JSON.parse(r.stdout)
    assert.equal(keys.length, 4)
    const hash = createHash('sha256').update(created.key).digest('hex')
    assert.ok(!r.stdout.includes(created.key), 'the secret is not listed')
    assert.ok(!r.stdout.includes(hash), 'the hash is not listed')
    for (const k of keys) {
      assert.deepEqual(Object.keys(k).sort(), [
        'createdAt',
        'expiresAt',
        'id',
        'label',
        'prefix',
        'replacedBy',
        'revokedAt',
        'scopes',
        'statusIds',
      ])
      assert.match(k.prefix, /^sdk_[A-Za-z0-9]{8}$/)
    }
    assert.ok(created.key.startsWith(keys[0].prefix), 'the prefix tells the keys apart')
    const human = await run('key', 'list', '--user', user.id)
    assert.ok(!human.stdout.includes(created.key) && !human.stdout.includes(hash))
  })

  it('key revoke <keyId> makes the key stop working (401) and key list shows it revoked', async () => {
    const revoked = await json('key', 'revoke', created.id)
    assert.equal(revoked.id, created.id)
    assert.equal(typeof revoked.revokedAt, 'string')
    assert.equal(revoked.key, undefined, 'revoking does not show the secret again')
    const res = await api(created.key, 'GET', '/v1/checkAuth')
    assert.equal(res.status, 401)
    assert.equal(res.body.errorCode, 'unauthorized')
    const keys = await json('key', 'list', '--user', user.id)
    const listed = keys.find((k: { id: string }) => k.id === created.id)
    assert.equal(listed.revokedAt, revoked.revokedAt)
  })
})

describe('every command takes --json, before or after the command', () => {
  it('statusd --json user list is user list --json', async () => {
    const after = await run('--json', 'user', 'list')
    assert.equal(after.code, 0, after.stderr)
    assert.deepEqual(JSON.parse(after.stdout), await json('user', 'list'))
  })

  it('an error with --json before the command is a JSON error too', async () => {
    const res = await run('--json', 'key', 'list', '--user', 'nobody@example.com')
    assert.equal(res.code, 1)
    assert.match(JSON.parse(res.stderr).error, /no user nobody@example\.com/)
  })

  it('help --json prints the usage as { usage }', async () => {
    for (const argv of [
      ['help', '--json'],
      ['--json', 'help'],
    ]) {
      const res = await run(...argv)
      assert.equal(res.code, 0)
      const { usage } = JSON.parse(res.stdout)
      assert.match(usage, /^Usage: statusd \[options\] \[command\]\n/)
      assert.match(usage, /^ {2}serve /m)
    }
  })
})

describe('statusd errors: non-zero exit, one clear line on stderr (JSON with --json)', () => {
  const cases: { name: string; argv: string[]; code: number; message: RegExp }[] = [
    {
      name: 'unknown plan on user add',
      argv: ['user', 'add', '--name', 'Zed', '--plan', 'gold'],
      code: 1,
      message: /unknown plan "gold" \(plans: free, pro\)/,
    },
    {
      name: 'unknown plan on user set',
      argv: ['user', 'set', 'alice@example.com', '--plan', 'gold'],
      code: 1,
      message: /unknown plan "gold"/,
    },
    {
      name: 'unknown user (e-mail) on key create',
      argv: ['key', 'create', '--user', 'nobody@example.com'],
      code: 1,
      message: /no user nobody@example\.com/,
    },
    {
      name: 'unknown user (id) on user set',
      argv: ['user', 'set', 'no-such-user-id', '--verified'],
      code: 1,
      message: /no user no-such-user-id/,
    },
    {
      name: 'unknown user on key list',
      argv: ['key', 'list', '--user', 'nobody@example.com'],
      code: 1,
      message: /no user nobody@example\.com/,
    },
    {
      name: 'unknown key on key revoke',
      argv: ['key', 'revoke', 'no-such-key-id'],
      code: 1,
      message: /no key no-such-key-id/,
    },
    {
      name: 'key label with a noncharacter: the text rule of the API (finding 8 of issue 19)',
      argv: ['key', 'create', '--user', 'erin@example.com', '--label', 'ci \ufffe'],
      code: 1,
      message: /label must contain a visible character and no control characters or noncharacters/,
    },
    {
      name: 'key label of nothing visible',
      argv: ['key', 'create', '--user', 'erin@example.com', '--label', '\u200b '],
      code: 1,
      message: /label must contain a visible character/,
    },
    {
      name: 'bad expiry: not a date',
      argv: ['key', 'create', '--user', 'erin@example.com', '--expires', 'tomorrow'],
      code: 1,
      message: /expiry "tomorrow" is not an ISO 8601 date/,
    },
    {
      name: 'bad expiry: a date, but not ISO 8601',
      argv: ['key', 'create', '--user', 'erin@example.com', '--expires', 'Dec 31 2099'],
      code: 1,
      message: /expiry "Dec 31 2099" is not an ISO 8601 date/,
    },
    {
      name: 'bad expiry: a day that does not exist (no silent roll-over to March)',
      argv: ['key', 'create', '--user', 'erin@example.com', '--expires', '2099-02-30'],
      code: 1,
      message: /expiry "2099-02-30" is not an ISO 8601 date/,
    },
    {
      name: 'bad expiry: a date-time without a zone (ambiguous)',
      argv: ['key', 'create', '--user', 'erin@example.com', '--expires', '2099-12-31T23:59:59'],
      code: 1,
      message: /expiry "2099-12-31T23:59:59" is not an ISO 8601 date \(e\.g\. 2030-12-31 or/,
    },
    {
      name: 'bad expiry: in the past',
      argv: ['key', 'create', '--user', 'erin@example.com', '--expires', '2001-01-01T00:00:00Z'],
      code: 1,
      message: /expiry must be in the future/,
    },
    {
      name: 'unknown command',
      argv: ['frobnicate'],
      code: 2,
      message: /unknown command: frobnicate/,
    },
    {
      name: 'unknown user subcommand',
      argv: ['user', 'frobnicate'],
      code: 2,
      message: /unknown command: user frobnicate/,
    },
    {
      name: 'unknown key subcommand',
      argv: ['key', 'frobnicate'],
      code: 2,
      message: /unknown command: key frobnicate/,
    },
    {
      name: 'unknown option',
      argv: ['user', 'add', '--name', 'Zed', '--colour', 'red'],
      code: 2,
      message: /user add does not take --colour/,
    },
    {
      name: 'an option the subcommand does not take',
      argv: ['user', 'list', '--plan', 'pro'],
      code: 2,
      message: /user list does not take --plan/,
    },
    {
      name: 'an argument more than the subcommand takes',
      argv: ['user', 'list', 'extra'],
      code: 2,
      message: /user list does not take "extra"/,
    },
    {
      name: 'an argument more for key revoke',
      argv: ['key', 'revoke', 'k1', 'k2'],
      code: 2,
      message: /key revoke does not take "k2"/,
    },
    {
      name: 'an option key list does not take',
      argv: ['key', 'list', '--user', 'alice@example.com', '--grace', '5'],
      code: 2,
      message: /key list does not take --grace/,
    },
    {
      name: 'an option without its value',
      argv: ['key', 'rotate', 'k1', '--grace'],
      code: 2,
      message: /--grace needs a value/,
    },
    {
      name: 'an option value that starts with a dash is the value (the store refuses -1)',
      argv: ['key', 'rotate', 'k1', '--grace', '-1'],
      code: 1,
      message: /grace period must be 0 to 86400 seconds/,
    },
    {
      name: 'a mistyped command: did you mean',
      argv: ['user', 'lst'],
      code: 2,
      message: /unknown command: user lst \(did you mean list\?\)/,
    },
    {
      name: 'a mistyped option: did you mean',
      argv: ['user', 'add', '--nme', 'Zed'],
      code: 2,
      message: /user add does not take --nme \(did you mean --name\?\)/,
    },
    {
      name: 'migrate takes no argument',
      argv: ['migrate', 'extra'],
      code: 2,
      message: /extra/,
    },
    {
      name: 'serve takes no option',
      argv: ['serve', '--bogus'],
      code: 2,
      message: /--bogus/,
    },
    {
      name: 'missing --name',
      argv: ['user', 'add'],
      code: 2,
      message: /user add needs --name/,
    },
    {
      name: 'user set with nothing to set',
      argv: ['user', 'set', 'alice@example.com'],
      code: 2,
      message:
        /user set needs --name, --email, --plan, --verified, --unverified, --admin or --no-admin/,
    },
  ]

  for (const c of cases) {
    it(`${c.name}: exit ${c.code}, one line`, async () => {
      const usersBefore = await json('user', 'list')
      const r = await run(...c.argv)
      assert.equal(r.code, c.code, `stderr: ${r.stderr}`)
      assert.equal(r.stdout, '', 'nothing on stdout')
      assert.match(r.stderr, /^statusd: [^\n]+\n$/, 'exactly one line on stderr')
      assert.match(r.stderr, c.message)
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace')
      assert.deepEqual(await json('user', 'list'), usersBefore, 'a failed command changes nothing')
    })
    it(`${c.name} with --json: the error is one JSON line`, async () => {
      const r = await run(...c.argv, '--json')
      assert.equal(r.code, c.code, `stderr: ${r.stderr}`)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, /^[^\n]+\n$/, 'exactly one line on stderr')
      const body = JSON.parse(r.stderr)
      assert.equal(typeof body.error, 'string')
      assert.match(body.error, c.message)
    })
  }

  it('a failed key create writes no key', async () => {
    const before = await json('key', 'list', '--user', 'erin@example.com')
    await run('key', 'create', '--user', 'erin@example.com', '--expires', 'Dec 31 2099')
    assert.deepEqual(await json('key', 'list', '--user', 'erin@example.com'), before)
  })
})

describe('statusd key create --scope / --status (docs/accounts.md#scoped-keys)', () => {
  let user: { id: string }
  let doorId: string

  before(async () => {
    user = await json('user', 'add', '--name', 'Dana', '--email', 'dana@example.com')
    const full = await json('key', 'create', '--user', user.id)
    const door = await api(full.key, 'POST', '/v1/status-keys/door', { value: 'shut' })
    doorId = door.body.id
  })

  it('key create without --scope makes a key with every scope, not confined', async () => {
    const k = await json('key', 'create', '--user', user.id)
    assert.deepEqual(k.scopes, [
      'status:read',
      'status:value',
      'status:write',
      'status:manage',
      'keys',
      'account',
    ])
    assert.equal(k.statusIds, null)
  })

  it('--scope (a comma list, or repeated) and --status make a limited key the API holds to them', async () => {
    const k = await json(
      'key',
      'create',
      '--user',
      user.id,
      '--scope',
      'status:read, status:value',
      '--scope',
      'account',
      '--status',
      doorId,
    )
    assert.deepEqual(k.scopes, ['status:read', 'status:value', 'account'])
    assert.deepEqual(k.statusIds, [doorId])
    const check = await api(k.key, 'GET', '/v1/checkAuth')
    assert.deepEqual(check.body.credential.scopes, k.scopes)
    assert.equal((await api(k.key, 'POST', '/v1/status-keys/door', { value: 'open' })).status, 200)
    const rename = await api(k.key, 'POST', '/v1/status-keys/door', { name: 'Front door' })
    assert.equal(rename.status, 403)
    assert.equal(rename.body.errorCode, 'insufficientScope')
    const list = await run('key', 'list', '--user', user.id)
    assert.match(
      list.stdout,
      new RegExp(`scopes status:read,status:value,account  statuses ${doorId}`),
    )
  })

  it('--scope status:* stands for the four status scopes', async () => {
    const k = await json('key', 'create', '--user', user.id, '--scope', 'status:*')
    assert.deepEqual(k.scopes, ['status:read', 'status:value', 'status:write', 'status:manage'])
  })

  it('an unknown scope, or a status the user does not reach, is refused and makes no key', async () => {
    const before = (await json('key', 'list', '--user', user.id)).length
    const scope = await run('key', 'create', '--user', user.id, '--scope', 'superuser')
    assert.notEqual(scope.code, 0)
    assert.match(scope.stderr, /unknown scope "superuser"/)
    const admin = await run('key', 'create', '--user', user.id, '--scope', 'admin')
    assert.notEqual(admin.code, 0)
    assert.match(admin.stderr, /only an operator's key may hold the scope admin/)
    const status = await run('key', 'create', '--user', user.id, '--status', 'nosuchstatus')
    assert.notEqual(status.code, 0)
    assert.match(status.stderr, /nosuchstatus is not a status you own or have a role on/)
    assert.equal((await json('key', 'list', '--user', user.id)).length, before)
  })
})
