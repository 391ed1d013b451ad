import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { SCOPES, type Scope } from '../../src/modules/keys/scopes.ts'
import {
  apiRoutes,
  fillUrl,
  makeWorld,
  ownerParams,
  plausibleBody,
  snapshot,
} from '../owasp/world.ts'

// Every route that takes a credential declares the scope an API key needs for it
// (docs/accounts.md#scoped-keys, `config.scope`), and the declaration is enforced: a route added
// later without one fails here. checkAuth alone needs none: any key may ask what it may do.

const NEEDS_NO_SCOPE = ['checkAuth']

interface Operation {
  operationId: string
  security?: unknown[]
  description?: string
  'x-required-scope'?: Scope
  responses: Record<string, { description?: string }>
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch']

// biome-ignore lint/suspicious/noExplicitAny: the parsed OpenAPI document
const operationsOf = (doc: any) =>
  Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method, path, op, name: `${method.toUpperCase()} ${path}` })),
  )

describe('the scope inventory', () => {
  it('every route that takes a credential declares a scope (checkAuth alone needs none)', async (ctx) => {
    const w = await makeWorld(ctx)
    const doc = (await w.t.app.inject({ url: '/openapi.json' })).json()
    const keyed = operationsOf(doc).filter(({ op }) => (op.security?.length ?? 0) > 0)
    assert.ok(keyed.length > 15, 'the document lists the keyed routes')
    const undeclared = keyed
      .filter(({ op }) => !NEEDS_NO_SCOPE.includes(op.operationId) && !op['x-required-scope'])
      .map(({ name }) => name)
    assert.deepEqual(undeclared, [], 'routes without config.scope')
    for (const { name, op } of keyed)
      if (NEEDS_NO_SCOPE.includes(op.operationId))
        assert.equal(op['x-required-scope'], undefined, name)
      else {
        const scope = op['x-required-scope'] as string
        assert.ok((SCOPES as readonly string[]).includes(scope), `${name}: ${scope}`)
        assert.match(op.description ?? '', new RegExp(`\`${scope}\``), `${name} says its scope`)
        assert.match(op.responses['403']?.description ?? '', /insufficientScope/, name)
      }
  })

  it('the scopes of the main routes are the documented ones', async (ctx) => {
    const w = await makeWorld(ctx)
    const doc = (await w.t.app.inject({ url: '/openapi.json' })).json()
    const scopeOf = (method: string, path: string) => doc.paths[path][method]['x-required-scope']
    assert.equal(scopeOf('get', '/v1/status/{statusId}'), 'status:read')
    assert.equal(scopeOf('get', '/v1/user/status'), 'status:read')
    assert.equal(scopeOf('patch', '/v1/status/{statusId}'), 'status:value')
    assert.equal(scopeOf('post', '/v1/status-keys/{statusKey}'), 'status:value')
    assert.equal(scopeOf('delete', '/v1/status/{statusId}'), 'status:manage')
    assert.equal(scopeOf('put', '/v1/status/{statusId}/users/{userId}'), 'status:manage')
    assert.equal(scopeOf('get', '/v1/status/{statusId}/events'), 'status:read')
    assert.equal(scopeOf('post', '/v1/user/api-keys'), 'keys')
    assert.equal(scopeOf('post', '/v1/user/api-keys/revoke-all'), 'keys')
  })

  it('every declared scope is enforced: a key with every scope but that one gets 403 insufficientScope, changing nothing', async (ctx) => {
    const w = await makeWorld(ctx)
    const doc = (await w.t.app.inject({ url: '/openapi.json' })).json()
    const keys = new Map<Scope, { id: string; key: string }>()
    // the owner is an operator: its keys may hold admin, so the operators' routes are checked too
    await w.t.database.db
      .updateTable('users')
      .set({ admin: 1 })
      .where('id', '=', w.owner.id)
      .execute()
    for (const needed of SCOPES) {
      // status:write includes status:value: a key without status:value lacks both
      const held = SCOPES.filter(
        (s) => s !== needed && !(needed === 'status:value' && s === 'status:write'),
      )
      const made = await createApiKey(w.t.database.db, w.owner.id, { scopes: held })
      keys.set(needed, { id: w.owner.id, key: made.key })
    }
    let checked = 0
    for (const route of apiRoutes(w.t)) {
      const path = route.url.replace(/:(\w+)/g, '{$1}')
      const scope = doc.paths[path]?.[route.method.toLowerCase()]?.['x-required-scope'] as
        | Scope
        | undefined
      if (scope === undefined) continue
      const name = `${route.method} ${route.url}`
      const before = await snapshot(w.t)
      const res = await w.t.request(
        keys.get(scope) ?? null,
        route.method as 'GET',
        fillUrl(route.url, ownerParams(w)),
        plausibleBody(route),
      )
      assert.equal(res.statusCode, 403, `${name}: ${res.body}`)
      assert.equal(res.json().errorCode, 'insufficientScope', name)
      assert.match(res.json().message, new RegExp(scope), name)
      assert.equal(await snapshot(w.t), before, `${name} changed nothing`)
      checked++
    }
    assert.ok(checked > 15, `${checked} routes checked`)
  })
})
