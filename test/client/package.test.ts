import assert from 'node:assert/strict'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { describe, it } from 'node:test'
import { makeApp } from '../helpers/app.ts'
import { tempDir } from '../helpers/cleanup.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { ROOT, runToEnd } from '../helpers/processes.ts'

// docs/client.md#how-the-package-is-built: `npm pack -w @statusd/client` makes a package that
// works outside this repository. Installed from its tarball into an empty project, a program
// type-checks against its declarations (which point nowhere into the server's sources) and
// runs against a real server.

const PROGRAM = `import { type Status, StatusdClient, StatusdError } from '@statusd/client'

const [url, apiKey] = process.argv.slice(2) as [string, string]
const statusd = new StatusdClient({ url, apiKey })
const status: Status = await statusd.set('room-4', { value: 'FREE', colorNo: 3 })
// @ts-expect-error: a value is a string; the declarations are the server's types, not any
await statusd.set('room-4', { value: 3 }).catch(() => {})
let errorCode: StatusdError['errorCode'] = null
try {
  await statusd.update(status.id, { value: 'MUCH TOO LONG' })
} catch (err) {
  if (err instanceof StatusdError) errorCode = err.errorCode
}
const listed = await statusd.list()
console.log(JSON.stringify({ value: status.value, errorCode, listed: listed.map((s) => s.statusKey) }))
`

describe('the packed @statusd/client', () => {
  it('installs from its tarball, type-checks against its own declarations and runs', {
    // the package does not depend on the engine: the SQLite run checks it
    skip: TEST_ENGINE === 'postgres' && 'the package does not depend on the engine',
  }, async (ctx) => {
    const dir = tempDir(ctx)
    const env = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' }
    const packed = await runToEnd(
      ctx,
      'npm',
      ['pack', '-w', '@statusd/client', '--pack-destination', dir],
      env,
    )
    assert.equal(packed.code, 0, packed.stderr)
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))
    assert.ok(tarball, 'a tarball')

    const project = path.join(dir, 'project')
    mkdirSync(project)
    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'scratch', type: 'module', private: true }),
    )
    const installed = await runToEnd(
      ctx,
      'npm',
      ['install', '--offline', '--prefix', project, path.join(dir, tarball)],
      { ...env, npm_config_cache: path.join(dir, 'cache') },
    )
    assert.equal(installed.code, 0, installed.stderr)
    const pkg = path.join(project, 'node_modules/@statusd/client')
    const files = readdirSync(path.join(pkg, 'dist')).sort()
    assert.deepEqual(files, ['errors.d.ts', 'index.d.ts', 'index.js', 'sse.d.ts', 'types.d.ts'])
    assert.deepEqual(
      JSON.parse(readFileSync(path.join(pkg, 'package.json'), 'utf8')).dependencies,
      undefined,
      'no dependencies',
    )
    for (const file of files) {
      const text = readFileSync(path.join(pkg, 'dist', file), 'utf8')
      assert.doesNotMatch(text, /from '\.\.\//, `${file} imports nothing outside the package`)
      assert.doesNotMatch(text, /typebox|fastify/, `${file} names nothing of the server`)
    }

    writeFileSync(path.join(project, 'main.ts'), PROGRAM)
    // the declarations with the DOM library and Node's process, as a Node program sees them
    writeFileSync(path.join(project, 'process.d.ts'), 'declare const process: { argv: string[] }\n')
    const check = await runToEnd(
      ctx,
      path.join(ROOT, 'node_modules/.bin/tsc'),
      [
        '--ignoreConfig',
        '--noEmit',
        '--strict',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--lib',
        'es2022,dom',
        '--types',
        '',
        '--allowImportingTsExtensions',
        path.join(project, 'main.ts'),
        path.join(project, 'process.d.ts'),
      ],
      env,
    )
    assert.equal(check.code, 0, `${check.stdout}\n${check.stderr}`)

    const t = await makeApp(ctx)
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const owner = await t.user()
    const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const ran = await runToEnd(
      ctx,
      process.execPath,
      [path.join(project, 'main.ts'), url, owner.key],
      env,
    )
    assert.equal(ran.code, 0, ran.stderr)
    assert.deepEqual(JSON.parse(ran.stdout), {
      value: 'FREE',
      errorCode: 'validationError',
      listed: ['room-4'],
    })
  })
})
