import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'

// docs/cli.md: the client commands, --version and the help load none of the server's or the
// storage's code, nor Node's fetch stack (`statusd serve` loads this graph first); an admin
// command loads it when it runs. A child process, since the test runner's own has loaded
// everything; what it loads is recorded by a module hook.
const main = pathToFileURL(new URL('../../src/cli/main.ts', import.meta.url).pathname).href
const child = (argv: string[]) => `
import module from 'node:module'
const loaded = new Set()
module.registerHooks({
  load(url, context, next) {
    loaded.add(url)
    return next(url, context)
  },
})
const { main } = await import(${JSON.stringify(main)})
let out = ''
const code = await main(${JSON.stringify(argv)}, (t) => { out += t }, (t) => { out += t }, {
  env: { STATUSD_CONFIG: '/nonexistent/statusd-config.json', DATABASE_URL: 'sqlite::memory:' },
})
const heavy = ['kysely', 'typebox', 'fastify', 'better-sqlite3', 'pg', 'ajv'].filter((name) =>
  [...loaded].some((u) => u.includes(\`/node_modules/\${name}/\`)),
)
// Node's fetch stack is one of its own modules, which no module hook sees
if (process.moduleLoadList.some((m) => m.includes('/undici/'))) heavy.push('undici')
const server = [...loaded].filter((u) =>
  ['.service.ts', '.repository.ts', '.routes.ts', '/src/app.ts', '/src/server.ts', '/src/db/migrations/'].some((part) => u.includes(part)),
)
process.stdout.write(JSON.stringify({ code, heavy, server, out }))
`

const run = (argv: string[]) => {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', child(argv)], {
    encoding: 'utf8',
  })
  assert.equal(result.status, 0, result.stderr)
  return JSON.parse(result.stdout) as {
    code: number
    heavy: string[]
    server: boolean
    out: string
  }
}

describe('the client commands start without the server (docs/cli.md)', () => {
  const light: Array<[string, string[], number]> = [
    ['--version', ['--version'], 0],
    ['the help of a client command', ['set', '--help'], 0],
    ['the help of an admin command', ['user', 'add', '--help'], 0],
    ['a mistyped command', ['sett', 'room-4', 'FREE'], 2],
    ['a client command refused before any request (not logged in)', ['get', 'room-4'], 2],
  ]
  for (const [name, argv, code] of light)
    it(`${name}: loads no storage, validation or server code`, () => {
      const result = run(argv)
      assert.equal(result.code, code, result.out)
      assert.deepEqual(result.heavy, [])
      assert.deepEqual(result.server, [])
    })

  it('an admin command loads what it runs, and runs', () => {
    const result = run(['user', 'list', '--json'])
    assert.equal(result.code, 0, result.out)
    assert.deepEqual(JSON.parse(result.out), [])
    assert.ok(result.heavy.includes('kysely'), 'the storage loaded when the command ran')
  })
})
