import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { it } from 'node:test'
import { BIN, ROOT, runToEnd, statusdEnv } from '../helpers/processes.ts'

// docs/operations.md#requirements-and-installation: `statusd` checks the Node.js version
// before anything else, and on an older Node says what it needs and how to get it (exit 2)
// instead of dying on its first TypeScript import.

const ENGINES: string = JSON.parse(fs.readFileSync(`${ROOT}/package.json`, 'utf8')).engines.node
const env = statusdEnv({ DATABASE_URL: 'sqlite::memory:' })

/** Runs bin/statusd.js on this Node, made to report `version` as its own before anything runs. */
const runAs = (t: Parameters<typeof runToEnd>[0], version: string, ...args: string[]) =>
  runToEnd(
    t,
    process.execPath,
    [
      '--import',
      `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${version}'})`,
      BIN,
      ...args,
    ],
    env,
  )

const refusal = (version: string) => [
  `statusd: needs Node.js ${ENGINES}, but this is Node.js ${version} (`,
  'Install Node.js 24 LTS: https://nodejs.org/en/download',
]

it('the Node.js it needs is the one package.json engines names', () => {
  assert.equal(ENGINES, '>=22.18')
})

it('an older Node.js: statusd names the Node it needs and how to get it, exit 2, nothing run', async (t) => {
  for (const version of ['22.17.1', '22.2.0', '21.99.0', '20.20.2', '18.20.4']) {
    const r = await runAs(t, version, 'help')
    assert.equal(r.code, 2, `${version}: ${r.stderr}`)
    assert.equal(r.stdout, '', `${version}: no command ran`)
    for (const part of refusal(version))
      assert.ok(r.stderr.includes(part), `${version}: ${r.stderr}`)
  }
})

it('Node.js 22.18 and newer pass the check and run the command', async (t) => {
  // two, side by side: each loads the whole CLI, the slow part of this file
  const versions = ['22.18.0', '30.1.2']
  const runs = await Promise.all(versions.map((version) => runAs(t, version, 'help')))
  runs.forEach((r, i) => {
    assert.equal(r.code, 0, `${versions[i]}: ${r.stderr}`)
    assert.match(r.stdout, /statusd serve/, versions[i])
  })
})

// A real old Node, when this machine has one (Debian's `nodejs` package is Node 18 on
// bookworm; CI installs Node 24 next to an older system Node). It proves the check itself
// parses and runs there, which the version stand-in above cannot.
const oldNode = ['/usr/bin/node', '/usr/bin/nodejs', '/usr/local/bin/node'].find((bin) => {
  if (!fs.existsSync(bin)) return false
  const v = spawnSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim()
  const [major = 0, minor = 0] = v.split('.').map(Number)
  return v !== '' && (major < 22 || (major === 22 && minor < 18))
})

it('a real older Node.js runs the check and is refused with the message', {
  skip: oldNode ? false : 'no Node.js older than 22.18 on this machine',
}, async (t) => {
  const version = spawnSync(oldNode as string, ['-p', 'process.versions.node'], {
    encoding: 'utf8',
  }).stdout.trim()
  const r = await runToEnd(t, oldNode as string, [BIN, 'serve'], env)
  assert.equal(r.code, 2, r.stderr)
  assert.equal(r.stdout, '')
  for (const part of refusal(version)) assert.ok(r.stderr.includes(part), r.stderr)
  assert.ok(!r.stderr.includes('ERR_'), 'no Node error code, only the message')
})

// `npm ci` in a checkout: npm runs `prepare` (which builds the app from TypeScript) after
// installing, and an older Node failed there with ERR_UNKNOWN_FILE_EXTENSION. The check runs
// first, on its own, and names what to run again.
const CHECK = `${ROOT}/bin/check-node.js`

it("npm ci's first script is the Node.js check", () => {
  const pkg = JSON.parse(fs.readFileSync(`${ROOT}/package.json`, 'utf8'))
  assert.match(pkg.scripts.prepare, /^node bin\/check-node\.js && /)
})

it('the check on its own (npm ci) names the Node it needs and says to run npm ci again', async (t) => {
  const r = await runToEnd(
    t,
    process.execPath,
    [
      '--import',
      "data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.20.2'})",
      CHECK,
    ],
    env,
  )
  assert.equal(r.code, 2, r.stderr)
  for (const part of refusal('20.20.2')) assert.ok(r.stderr.includes(part), r.stderr)
  assert.match(r.stderr, /then run npm ci again with it\.$/)
  const ok = await runToEnd(t, process.execPath, [CHECK], env)
  assert.equal(ok.code, 0, ok.stderr)
  assert.equal(ok.stdout + ok.stderr, '', 'a Node new enough: silent')
})

it('a real older Node.js: the check run by npm ci refuses it with the message', {
  skip: oldNode ? false : 'no Node.js older than 22.18 on this machine',
}, async (t) => {
  const r = await runToEnd(t, oldNode as string, [CHECK], env)
  assert.equal(r.code, 2, r.stderr)
  assert.match(r.stderr, /^statusd: needs Node\.js >=22\.18, but this is Node\.js /)
  assert.ok(!r.stderr.includes('ERR_'), 'no Node error code, only the message')
})
