import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, it } from 'node:test'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { asLogLine, type Json, ROOT, runToEnd, start, statusdEnv } from '../helpers/processes.ts'

// docs/operations.md#install-from-npm: the packages as a user gets them, the release's
// two tarballs (docs/operations.md#making-a-release). `npm pack` of statusd (whose prepack
// script compiles src/ into lib/) and of @statusd/client, then one `npm install` of both
// tarballs in an empty folder, then `npx statusd serve` there: it starts from the compiled
// JavaScript under node_modules, answers /readyz and /healthz with its version, its
// first-start key sets a status, and a program in that folder that imports the installed
// @statusd/client reads and writes through it.
//
// SLOW (npm install of every runtime dependency, from npm's cache when CI's `npm ci` filled
// it, else from the registry; about a minute and a half in all): it runs in CI (CI=true) and
// on demand with TEST_PACKAGE=1 (docs/architecture.md#tests), and is skipped otherwise.
// The installed package runs on its own SQLite file whatever engine the suite tests, so the
// PostgreSQL pass leaves this file out (docs/architecture.md#tests).
const wanted = process.env.CI === 'true' || process.env.TEST_PACKAGE === '1'
const suite = suiteLifetime()
const STEP_LIMIT_MS = 5 * 60_000

let dir: string
let app: string
/** npm's environment: none of the npm_* settings of an `npm test` this may run under. */
let env: Record<string, string | undefined>

before(() => {
  if (!wanted) return
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-pack-'))
  app = path.join(dir, 'app')
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, 'package.json'), '{"private":true}\n')
  env = statusdEnv({})
  for (const name of Object.keys(env)) {
    if (/^npm_/i.test(name) && !/^npm_config_(cache|registry|nodedir)$/i.test(name))
      delete env[name]
  }
  Object.assign(env, {
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  })
})

after(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
const clientPkg = JSON.parse(
  fs.readFileSync(path.join(ROOT, 'packages', 'client', 'package.json'), 'utf8'),
)

/** A program a user of the client writes, run with the installed package: plain JavaScript. */
const CLIENT_PROGRAM = `import { StatusdClient, StatusdError } from '@statusd/client'

const [url, apiKey] = process.argv.slice(2)
const statusd = new StatusdClient({ url, apiKey })
const set = await statusd.set('room-5', { value: 'BUSY' })
const read = await statusd.getByKey('room-5')
const history = await statusd.history(set.id)
let errorCode = null
try {
  await statusd.get('no-such-status')
} catch (err) {
  if (err instanceof StatusdError) errorCode = err.errorCode
}
console.log(JSON.stringify({ value: read.value, entries: history.items.length, errorCode }))
`

it('npm pack both packages, npm install both tarballs in an empty folder, npx statusd serve: ready, its version, a status set with the printed key and through the installed client', {
  skip: wanted ? false : 'slow: runs in CI, or with TEST_PACKAGE=1',
}, async () => {
  // A copy of the checkout packs, so that the prepack and prepare scripts (lib/, dist/app)
  // write beside it, not into the files other tests are reading.
  const checkout = path.join(dir, 'checkout')
  const skip = new Set(['node_modules', '.git', 'dist', 'lib', 'data'])
  fs.cpSync(ROOT, checkout, {
    recursive: true,
    filter: (from) => !skip.has(path.relative(ROOT, from).split(path.sep)[0] as string),
  })
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(checkout, 'node_modules'))

  const packed = await runToEnd(
    suite,
    'npm',
    ['pack', '--json', '--pack-destination', dir],
    env,
    checkout,
    STEP_LIMIT_MS,
  )
  assert.equal(packed.code, 0, packed.stderr)
  const [report] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[')))
  const files: string[] = report.files.map((f: { path: string }) => f.path)
  assert.ok(files.includes('lib/cli/main.js'), 'the compiled entry ships')
  assert.ok(files.includes('dist/app/build.json'), 'the browser app ships')
  assert.ok(files.includes('LICENSE') && files.includes('CHANGELOG.md'))
  assert.ok(files.includes('deploy/statusd.service'), 'the systemd unit ships')
  assert.deepEqual(
    files.filter((f) => f.endsWith('.ts') || f.startsWith('src/') || f.startsWith('test/')),
    [],
    'no TypeScript, sources or tests',
  )
  const changelog = fs.readFileSync(path.join(checkout, 'CHANGELOG.md'), 'utf8')
  assert.match(changelog, new RegExp(`^## ${pkg.version.replaceAll('.', '\\.')} — `, 'm'))

  const clientPacked = await runToEnd(
    suite,
    'npm',
    ['pack', '-w', '@statusd/client', '--json', '--pack-destination', dir],
    env,
    checkout,
    STEP_LIMIT_MS,
  )
  assert.equal(clientPacked.code, 0, clientPacked.stderr)
  const [clientReport] = JSON.parse(clientPacked.stdout.slice(clientPacked.stdout.indexOf('[')))
  assert.equal(clientReport.name, '@statusd/client')
  assert.equal(clientReport.version, pkg.version, 'the client is released with the server')

  const installed = await runToEnd(
    suite,
    'npm',
    [
      'install',
      '--prefer-offline',
      path.join(dir, report.filename),
      path.join(dir, clientReport.filename),
    ],
    env,
    app,
    STEP_LIMIT_MS,
  )
  assert.equal(installed.code, 0, installed.stderr)
  const installedClient = JSON.parse(
    fs.readFileSync(path.join(app, 'node_modules', '@statusd', 'client', 'package.json'), 'utf8'),
  )
  assert.equal(installedClient.version, clientPkg.version)

  const version = await runToEnd(suite, 'npx', ['--no', '--', 'statusd', '--version'], env, app)
  assert.equal(version.code, 0, version.stderr)
  assert.equal(version.stdout.trim(), pkg.version)

  // the installed bin itself, not through npx: npm runs a bin in a process group of its
  // own, which the test could not stop
  const server = start(
    suite,
    process.execPath,
    [path.join(app, 'node_modules', '.bin', 'statusd'), 'serve'],
    {
      ...env,
      DATABASE_URL: `sqlite:${path.join(dir, 'data', 'statusd.db')}`,
      PORT: '0',
      HOST: '127.0.0.1',
    },
    app,
  )
  const ready = asLogLine(
    await server.waitForLine((l) => asLogLine(l)?.msg === 'statusd ready', 'statusd ready'),
  )
  const url = ready?.address as string
  const keyLine = await server.waitForLine((l) => /^\s+sdk_\w{40}\s*$/.test(l), 'the key')
  const key = keyLine.trim()

  assert.equal((await fetch(`${url}/readyz`)).status, 200)
  assert.deepEqual(await (await fetch(`${url}/healthz`)).json(), {
    status: 'ok',
    version: pkg.version,
  })
  const set = await fetch(`${url}/v1/status-keys/room-4`, {
    method: 'POST',
    headers: { 'service-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ value: 'FREE' }),
  })
  assert.equal(set.status, 201, await set.clone().text())
  assert.equal(((await set.json()) as Json).value, 'FREE')
  // the files the compiled modules read beside themselves, and the app
  assert.equal((await fetch(`${url}/docs`)).status, 200)
  const page = await fetch(`${url}/`)
  assert.equal(page.status, 200)
  const script = /src="(\/[^"]+\.js)"/.exec(await page.text())?.[1]
  assert.ok(script, 'the app page loads its script')
  assert.equal((await fetch(`${url}${script}`)).status, 200)

  fs.writeFileSync(path.join(app, 'client-check.mjs'), CLIENT_PROGRAM)
  const ran = await runToEnd(
    suite,
    process.execPath,
    [path.join(app, 'client-check.mjs'), url, key],
    env,
    app,
  )
  assert.equal(ran.code, 0, ran.stderr)
  assert.deepEqual(JSON.parse(ran.stdout), { value: 'BUSY', entries: 1, errorCode: 'notFound' })
  await server.stop()
})
