// Peer "naive Express": the same PATCH /v1/status/:id written the quick way — Express 5,
// better-sqlite3 with its defaults, every statement prepared per request. Same database
// file and schema as statusd, same checks (key hash lookup, owner check, history row).
import { createHash } from 'node:crypto'
import Database from 'better-sqlite3'
import express from 'express'

const file = (process.env.DATABASE_URL ?? '').replace(/^sqlite:/, '')
const db = new Database(file)
const app = express()
app.use(express.json())

app.patch('/v1/status/:id', (req, res) => {
  const secret = req.get('service-api-key') ?? ''
  const hash = createHash('sha256').update(secret).digest('hex')
  const key = db
    .prepare('select user_id from api_keys where key_hash = ? and revoked_at is null')
    .get(hash) as { user_id: string } | undefined
  if (!key) return res.status(401).json({ message: 'Unauthorized' })
  const value = req.body?.value
  if (typeof value !== 'string' || value.length < 1 || value.length > 10)
    return res.status(400).json({ message: 'Bad Request' })
  const now = new Date().toISOString()
  const status = db.transaction(() => {
    const row = db.prepare('select * from statuses where id = ?').get(req.params.id) as
      | { owner_id: string; change_count: number }
      | undefined
    if (!row || row.owner_id !== key.user_id) return undefined
    db.prepare(
      'update statuses set value = ?, change_count = change_count + 1, updated_at = ?, value_updated_at = ? where id = ?',
    ).run(value, now, now, req.params.id)
    const updated = db.prepare('select * from statuses where id = ?').get(req.params.id) as {
      change_count: number
    }
    db.prepare(
      'insert into status_history (status_id, change_no, value, at, by_user_id) values (?, ?, ?, ?, ?)',
    ).run(req.params.id, updated.change_count, value, now, key.user_id)
    return updated
  })()
  if (!status) return res.status(404).json({ message: 'Not Found' })
  return res.json(status)
})

const server = app.listen(Number(process.env.PORT ?? 8091), '127.0.0.1', () => {
  process.stdout.write(`ready ${JSON.stringify(server.address())}\n`)
})
process.on('SIGTERM', () => server.close(() => process.exit(0)))
