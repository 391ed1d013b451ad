import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { before, describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'
import type { Status, StatusListEntry } from '../../src/modules/statuses/statuses.schemas.ts'
import { makeApp, type TestApp, type TestUser } from '../helpers/app.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { TEST_ENGINE } from '../helpers/engine.ts'
import { ROOT, runToEnd } from '../helpers/processes.ts'

// docs/api.md (its opening): the OpenAPI document is usable by others. openapi-typescript
// generates types from a running server's /openapi.json, a small program using them through
// openapi-fetch (packages/openapi-check/smoke.ts) type-checks with TypeScript 5 and works
// against that server.

const CHECK = path.join(ROOT, 'packages/openapi-check')
const GENERATED = path.join(CHECK, 'generated')
const bin = (name: string) => path.join(CHECK, 'node_modules/.bin', name)

/** What packages/openapi-check/smoke.ts returns, in the server's own types. */
interface Smoke {
  smoke(
    baseUrl: string,
    apiKey: string,
    key: string,
  ): Promise<{
    created: { status: number; location: string | null; body: Status }
    patched: Status
    read: Status
    listed: StatusListEntry[]
    refused: { status: number; body: { errorCode: string; message: string } }
  }>
}

let t: TestApp
let base: string
let owner: TestUser
const suite = suiteLifetime()
before(async () => {
  t = await makeApp(suite)
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
  owner = await t.user()
})

describe('a client generated from the OpenAPI document', () => {
  // note: the document comes from the route schemas alone, the same on both engines, so the
  // PostgreSQL run leaves the generation and type check to the SQLite run
  it('openapi-typescript generates its types, and a program using them type-checks with TypeScript 5', {
    skip: TEST_ENGINE === 'postgres' && 'the document does not depend on the engine',
  }, async () => {
    const response = await fetch(`${base}/openapi.json`)
    assert.equal(response.status, 200)
    mkdirSync(GENERATED, { recursive: true })
    writeFileSync(path.join(GENERATED, 'openapi.json'), await response.text())
    const generate = await runToEnd(
      suite,
      bin('openapi-typescript'),
      [path.join(GENERATED, 'openapi.json'), '-o', path.join(GENERATED, 'statusd.ts')],
      process.env,
    )
    assert.equal(generate.code, 0, generate.stderr)
    const check = await runToEnd(suite, bin('tsc'), ['--noEmit', '-p', CHECK], process.env)
    assert.equal(check.code, 0, `${check.stdout}\n${check.stderr}`)
  })

  it('creates, updates, reads and lists through openapi-fetch, and reads a refusal as the Error body', async () => {
    // note: the module's one import of the generated types is erased when Node runs it
    const { smoke } = (await import(pathToFileURL(path.join(CHECK, 'smoke.ts')).href)) as Smoke
    const result = await smoke(base, owner.key, 'generated-1')
    assert.equal(result.created.status, 201)
    assert.equal(result.created.location, `/v1/status/${result.created.body.id}`)
    assert.deepEqual(
      [result.created.body.statusKey, result.created.body.value, result.created.body.colorNo],
      ['generated-1', 'FREE', 3],
    )
    assert.deepEqual(
      [result.patched.value, result.patched.description, result.patched.changeCount],
      ['BUSY', 'set by a generated client', 2],
    )
    assert.deepEqual(result.read, result.patched)
    assert.deepEqual(result.listed, [
      {
        statusId: result.read.id,
        statusKey: 'generated-1',
        shareId: result.read.shareId,
        name: 'Generated client',
      },
    ])
    assert.equal(result.refused.status, 400)
    assert.equal(result.refused.body.errorCode, 'validationError')
    // the refusal changed nothing
    const stored = await t.request(owner, 'GET', `/v1/status/${result.read.id}`)
    assert.equal(stored.json().value, 'BUSY')
  })
})
