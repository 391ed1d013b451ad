// A client generated from statusd's OpenAPI document by openapi-typescript, used through
// openapi-fetch: it compiles with TypeScript 5 (`npx tsc --noEmit` here) and works against a
// real server. test/openapi/generated-client.test.ts generates `generated/statusd.ts` from a
// running server's /openapi.json, type-checks this file and runs `smoke`.
import createClient from 'openapi-fetch'
import type { components, paths } from './generated/statusd.ts'

type Status = components['schemas']['Status']
type StatusListEntry = components['schemas']['StatusListEntry']
type ErrorBody = components['schemas']['Error']

export interface SmokeResult {
  created: { status: number; location: string | null; body: Status }
  patched: Status
  read: Status
  listed: StatusListEntry[]
  refused: { status: number; body: ErrorBody }
}

/** Create by key, PATCH by id, GET by id, list, and one refusal, as a generated client's user would. */
export async function smoke(baseUrl: string, apiKey: string, key: string): Promise<SmokeResult> {
  const client = createClient<paths>({ baseUrl, headers: { 'service-api-key': apiKey } })

  const created = await client.POST('/v1/status-keys/{statusKey}', {
    params: { path: { statusKey: key }, header: { 'Idempotency-Key': `smoke-${key}` } },
    body: { name: 'Generated client', value: 'FREE', colorNo: 3 },
  })
  if (!created.data) throw new Error(`create: ${created.response.status}`)
  const id: string = created.data.id

  const patched = await client.PATCH('/v1/status/{statusId}', {
    params: { path: { statusId: id } },
    body: { value: 'BUSY', description: 'set by a generated client' },
  })
  if (!patched.data) throw new Error(`patch: ${patched.response.status}`)

  const read = await client.GET('/v1/status/{statusId}', { params: { path: { statusId: id } } })
  if (!read.data) throw new Error(`get: ${read.response.status}`)

  const listed = await client.GET('/v1/user/status', { params: { query: { limit: 100 } } })
  if (!listed.data) throw new Error(`list: ${listed.response.status}`)

  // a value longer than 10 characters: the typed error body, not an exception
  const refused = await client.PATCH('/v1/status/{statusId}', {
    params: { path: { statusId: id } },
    body: { value: 'MUCH TOO LONG A VALUE' },
  })
  if (!refused.error) throw new Error(`an invalid PATCH succeeded: ${refused.response.status}`)

  return {
    created: {
      status: created.response.status,
      location: created.response.headers.get('location'),
      body: created.data,
    },
    patched: patched.data,
    read: read.data,
    listed: listed.data,
    refused: { status: refused.response.status, body: refused.error },
  }
}
