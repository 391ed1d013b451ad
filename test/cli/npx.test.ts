import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, it } from 'node:test'
import { buildApp } from '../../src/app.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import { DEFAULT_PLANS } from '../../src/modules/plans/plans.ts'
import { defer, type Lifetime } from '../helpers/cleanup.ts'
import { ROOT, runToEnd, statusdEnv } from '../helpers/processes.ts'

// docs/operations.md#admin-cli: the admin CLI is the same binary, run in the checkout as `npx
// statusd …`. These run exactly that, as real subprocesses in the repository root. `npx statusd`
// resolves to this package's own `bin` entry (npm runs a project's own bin when the name matches);
// the environment forbids npx to install anything, so a broken bin fails here instead of fetching
// some other `statusd` from the registry.

let dir: string
let env: Record<string, string | undefined>

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-npx-'))
  env = {
    ...statusdEnv({ DATABASE_URL: `sqlite:${path.join(dir, 'statusd.db')}` }),
    npm_config_yes: 'false',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  }
})

after(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

const npx = (t: Lifetime, ...args: string[]) => runToEnd(t, 'npx', ['statusd', ...args], env)

/** stderr without npm's own notices (e.g. config warnings of the machine's npm). */
const ownLines = (stderr: string) =>
  stderr.split('\n').filter((line) => line.trim() !== '' && !/^npm (warn|notice)/.test(line))

it('package.json names bin/statusd.js as the `statusd` bin, and it is an executable node script', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  assert.deepEqual(pkg.bin, { statusd: 'bin/statusd.js' })
  const bin = path.join(ROOT, 'bin', 'statusd.js')
  assert.match(fs.readFileSync(bin, 'utf8'), /^#!\/usr\/bin\/env node\n/)
  assert.ok(fs.statSync(bin).mode & 0o111, 'bin/statusd.js is executable')
})

it('npx statusd user add / key create / key revoke work, and the key works against the API', async (t) => {
  const help = await npx(t, 'help')
  assert.equal(help.code, 0, help.stderr)
  assert.match(help.stdout, /^Usage: statusd /, 'npx statusd is this package’s CLI')
  assert.match(help.stdout, /^ {2}serve /m)

  const added = await npx(t, 'user', 'add', '--name', 'Ops', '--email', 'ops@example.com', '--json')
  assert.equal(added.code, 0, added.stderr)
  const user = JSON.parse(added.stdout)
  assert.match(user.id, /^[\w-]{21}$/)

  const made = await npx(
    t,
    'key',
    'create',
    '--user',
    'ops@example.com',
    '--label',
    'npx',
    '--json',
  )
  assert.equal(made.code, 0, made.stderr)
  const key = JSON.parse(made.stdout)
  assert.match(key.key, /^sdk_/)

  const listed = await npx(t, 'key', 'list', '--user', user.id, '--json')
  assert.equal(listed.code, 0, listed.stderr)
  assert.ok(!listed.stdout.includes(key.key), 'key list never shows the secret')
  assert.deepEqual(
    JSON.parse(listed.stdout).map((k: { id: string }) => k.id),
    [key.id],
  )

  // a fresh app each time, on the database the CLI wrote
  const checkAuth = async () => {
    const app = await buildApp({
      database: createDatabase(env.DATABASE_URL as string),
      plans: DEFAULT_PLANS,
    })
    defer(t, () => app.close())
    return app.inject({ url: '/v1/checkAuth', headers: { 'service-api-key': key.key } })
  }
  const ok = await checkAuth()
  assert.equal(ok.statusCode, 200)
  assert.equal(ok.json().userId, user.id)

  const revoked = await npx(t, 'key', 'revoke', key.id)
  assert.equal(revoked.code, 0, revoked.stderr)
  assert.equal((await checkAuth()).statusCode, 401)
})

it('npx statusd <unknown command>: non-zero exit, one line on stderr', async (t) => {
  const r = await npx(t, 'frobnicate')
  assert.equal(r.code, 2)
  assert.equal(r.stdout.trim(), '')
  assert.deepEqual(ownLines(r.stderr), ['statusd: unknown command: frobnicate (see: statusd help)'])

  const j = await npx(t, 'user', 'add', '--name', 'X', '--plan', 'gold', '--json')
  assert.equal(j.code, 1)
  const lines = ownLines(j.stderr)
  assert.equal(lines.length, 1, j.stderr)
  assert.match(JSON.parse(lines[0] as string).error, /unknown plan "gold"/)
})
