// Peer "lean Fastify": the same durable PATCH /v1/status/:id as statusd, on the same stack
// (Fastify 5 + better-sqlite3), with nothing but the write: no product rules, hooks, logs or
// metrics. It keeps statusd's durability (an answer only after an fdatasync of the log) and
// group commit (the writes parsed in one turn of the event loop share a transaction and a
// sync), so it shows what the storage design alone costs on the machine: the floor any
// statusd on this stack is measured against (docs/performance.md, "The floor of the write").
import { createHash } from 'node:crypto'
import { fdatasync, openSync } from 'node:fs'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import type { StatusRow } from '../../src/db/database.ts'

const file = (process.env.DATABASE_URL ?? '').replace(/^sqlite:/, '')
const db = new Database(file)
// as statusd's batches: the commit writes the log, the fdatasync below makes it durable
db.pragma('synchronous = NORMAL')
db.pragma('wal_autocheckpoint = 0')
const walFd = openSync(`${file}-wal`, 'r')

const keyByHash = db.prepare(
  'select user_id from api_keys where key_hash = ? and revoked_at is null',
)
const read = db.prepare('select * from statuses where id = ?')
const update = db.prepare(
  'update statuses set value = ?, change_count = change_count + 1, version = version + 1, updated_at = ?, value_updated_at = ? where id = ?',
)
const addHistory = db.prepare(
  'insert into status_history (status_id, change_no, value, at, by_user_id) values (?, ?, ?, ?, ?)',
)
const begin = db.prepare('begin immediate')
const commit = db.prepare('commit')
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)')

/** One write: runs inside a batch's transaction, answers once the batch is durable. */
interface Unit {
  run(): void
  settle(): void
}

let queue: Unit[] = []
let sinceCheckpoint = 0
function commitBatch() {
  const batch = queue
  queue = []
  begin.run()
  for (const unit of batch) unit.run()
  commit.run()
  // between batches, so the log starts over at the next write (statusd does this on a thread)
  sinceCheckpoint += batch.length
  if (sinceCheckpoint >= 512) {
    sinceCheckpoint = 0
    checkpoint.get()
  }
  fdatasync(walFd, () => {
    for (const unit of batch) unit.settle()
  })
}
function enqueue(unit: Unit) {
  if (queue.push(unit) === 1) setImmediate(commitBatch)
}

// the key's owner, by the key itself (a hash lookup the first time)
const owners = new Map<string, string>()
function ownerOfKey(secret: string): string | undefined {
  let owner = owners.get(secret)
  if (owner === undefined) {
    const hash = createHash('sha256').update(secret).digest('hex')
    owner = (keyByHash.get(hash) as { user_id: string } | undefined)?.user_id
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
  (request, reply) => {
    const owner = ownerOfKey(String(request.headers['service-api-key'] ?? ''))
    if (owner === undefined) return reply.code(401).send({ message: 'Unauthorized' })
    const { id } = request.params as { id: string }
    const { value } = request.body as { value: string }
    return new Promise((resolve) => {
      let status: Record<string, unknown> | null = null
      enqueue({
        run() {
          const row = read.get(id) as StatusRow | undefined
          if (!row || row.owner_id !== owner) return
          const now = new Date().toISOString()
          update.run(value, now, now, id)
          addHistory.run(id, row.change_count + 1, value, now, owner)
          status = {
            id: row.id,
            shareId: row.share_id,
            statusKey: row.status_key,
            name: row.name,
            type: row.type,
            value,
            accessType: row.access_type,
            description: row.description,
            colorNo: row.color_no,
            accessTypeUserList: row.access_type_user_list,
            accessTypeHistory: row.access_type_history,
            changeCount: row.change_count + 1,
            createdAt: row.created_at,
            updatedAt: now,
            valueUpdatedAt: now,
          }
        },
        settle() {
          resolve(status ? reply.send(status) : reply.code(404).send({ message: 'Not Found' }))
        },
      })
    })
  },
)

const address = await app.listen({ port: Number(process.env.PORT ?? 8092), host: '127.0.0.1' })
process.stdout.write(`ready ${address}\n`)
process.on('SIGTERM', () => app.close().then(() => process.exit(0)))
