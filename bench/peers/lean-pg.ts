// Peer "lean PostgreSQL": the same PATCH /v1/status/:id as statusd, on Fastify 5 + `pg`
// against the same PostgreSQL database, with nothing but the write: no product rules, hooks,
// logs or metrics. The durable write is one round trip: one prepared (named) statement that
// updates the row and inserts its history row in a CTE, committed on its own (PostgreSQL's
// autocommit; durable as the server's `fsync`/`synchronous_commit` make it). What the
// PostgreSQL write costs on the machine, with the pool statusd uses by default (10
// connections): the floor statusd on PostgreSQL is measured against (docs/performance.md).
import { createHash } from 'node:crypto'
import Fastify from 'fastify'
import pg from 'pg'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
// bigint (int8 counters) as numbers, as statusd reads them
pg.types.setTypeParser(pg.types.builtins.INT8, Number)

const KEY_OWNER = {
  name: 'lean_key_owner',
  text: 'select user_id from api_keys where key_hash = $1 and revoked_at is null',
}
// note: the owner check is in the update's WHERE: a status of someone else is not found
const WRITE = {
  name: 'lean_write',
  text: `with updated as (
    update statuses set value = $2, change_count = change_count + 1, version = version + 1,
      updated_at = $3, value_updated_at = $3
    where id = $1 and owner_id = $4
    returning *
  ), history as (
    insert into status_history (status_id, change_no, value, at, by_user_id)
    select id, change_count, value, $3, $4 from updated
  )
  select * from updated`,
}

// the key's owner, by the key itself (a hash lookup the first time)
const owners = new Map<string, string>()
async function ownerOfKey(secret: string): Promise<string | undefined> {
  let owner = owners.get(secret)
  if (owner === undefined) {
    const hash = createHash('sha256').update(secret).digest('hex')
    const { rows } = await pool.query<{ user_id: string }>({ ...KEY_OWNER, values: [hash] })
    owner = rows[0]?.user_id
    if (owner !== undefined) owners.set(secret, owner)
  }
  return owner
}

const text = { type: 'string' } as const
const failure = { type: 'object', properties: { message: text } } as const
const app = Fastify()
app.patch(
  '/v1/status/:id',
  {
    schema: {
      params: {
        type: 'object',
        properties: { id: { type: 'string', maxLength: 32 } },
        required: ['id'],
      },
      body: {
        type: 'object',
        properties: { value: { type: 'string', minLength: 1, maxLength: 10 } },
        required: ['value'],
        additionalProperties: false,
      },
      response: {
        200: {
          type: 'object',
          properties: {
            id: text,
            shareId: text,
            statusKey: text,
            name: text,
            type: text,
            value: text,
            accessType: text,
            description: text,
            colorNo: { type: 'integer' },
            accessTypeUserList: text,
            accessTypeHistory: text,
            changeCount: { type: 'integer' },
            createdAt: text,
            updatedAt: text,
            valueUpdatedAt: text,
          },
        },
        401: failure,
        404: failure,
      },
    },
  },
  async (request, reply) => {
    const owner = await ownerOfKey(String(request.headers['service-api-key'] ?? ''))
    if (owner === undefined) return reply.code(401).send({ message: 'Unauthorized' })
    const { id } = request.params as { id: string }
    const { value } = request.body as { value: string }
    const now = new Date().toISOString()
    const { rows } = await pool.query({ ...WRITE, values: [id, value, now, owner] })
    const row = rows[0]
    if (!row) return reply.code(404).send({ message: 'Not Found' })
    return {
      id: row.id,
      shareId: row.share_id,
      statusKey: row.status_key,
      name: row.name,
      type: row.type,
      value: row.value,
      accessType: row.access_type,
      description: row.description,
      colorNo: row.color_no,
      accessTypeUserList: row.access_type_user_list,
      accessTypeHistory: row.access_type_history,
      changeCount: row.change_count,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      valueUpdatedAt: row.value_updated_at,
    }
  },
)

const address = await app.listen({ port: Number(process.env.PORT ?? 8093), host: '127.0.0.1' })
process.stdout.write(`ready ${address}\n`)
process.on('SIGTERM', () => app.close().then(() => pool.end().then(() => process.exit(0))))
