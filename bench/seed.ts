// Seeds a benchmark dataset: one user on an unlimited plan, N statuses with keys bench-0…,
// and H history rows per status. Writes ids.txt, keys.txt and meta.json beside the database.
//   node bench/seed.ts --dir /tmp/statusd-bench [--statuses 10000] [--history 1] [--database-url …]
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDatabase } from '../src/db/create-db.ts'
import type { NewHistoryRow, NewStatusRow } from '../src/db/database.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { newId, newShareId } from '../src/lib/ids.ts'
import { createApiKey } from '../src/modules/keys/keys.service.ts'
import { loadPlansFile } from '../src/modules/plans/plans.ts'
import { createUser } from '../src/modules/users/users.service.ts'

export interface SeedResult {
  key: string
  userId: string
  databaseUrl: string
  idsFile: string
  keysFile: string
}

const PLANS_FILE = new URL('./plans.json', import.meta.url).pathname

/** Creates the dataset; returns where it is and the API key to drive it with. */
export async function seed(options: {
  dir: string
  statuses: number
  history: number
  databaseUrl?: string
}): Promise<SeedResult> {
  const databaseUrl = options.databaseUrl ?? `sqlite:${join(options.dir, 'seed.db')}`
  const database = createDatabase(databaseUrl)
  const { db } = database
  try {
    await migrateToLatest(db)
    const plans = loadPlansFile(PLANS_FILE)
    const user = await createUser(db, plans, { name: 'bench', plan: 'unlimited', verified: true })
    const { key } = await createApiKey(db, user.id, { label: 'bench' })
    const ids: string[] = []
    const keys: string[] = []
    const start = new Date(Date.now() - 86_400_000).getTime()
    const STATUS_BATCH = 1000
    for (let from = 0; from < options.statuses; from += STATUS_BATCH) {
      const rows: NewStatusRow[] = []
      const history: NewHistoryRow[] = []
      for (let i = from; i < Math.min(from + STATUS_BATCH, options.statuses); i++) {
        const at = new Date(start + i).toISOString()
        const id = newId()
        ids.push(id)
        keys.push(`bench-${i}`)
        rows.push({
          id,
          share_id: newShareId(),
          owner_id: user.id,
          status_key: `bench-${i}`,
          name: `bench-${i}`,
          type: 'text',
          value: options.history > 0 ? `${i % 100}%` : null,
          access_type: 'private',
          description: '',
          color_no: 1 + (i % 12),
          access_type_user_list: 'owner',
          access_type_history: 'private',
          change_count: options.history,
          created_at: at,
          updated_at: at,
          value_updated_at: options.history > 0 ? at : null,
        })
        for (let h = 1; h <= options.history; h++)
          history.push({
            status_id: id,
            change_no: h,
            value: `${h % 100}%`,
            at,
            by_user_id: user.id,
          })
      }
      await db.transaction().execute(async (tx) => {
        await tx.insertInto('statuses').values(rows).execute()
        for (let h = 0; h < history.length; h += 5000)
          await tx
            .insertInto('status_history')
            .values(history.slice(h, h + 5000))
            .execute()
      })
      if (options.statuses >= 100_000 && (from / STATUS_BATCH) % 50 === 0)
        process.stderr.write(`seed: ${from + rows.length} / ${options.statuses} statuses\n`)
    }
    const idsFile = join(options.dir, 'ids.txt')
    const keysFile = join(options.dir, 'keys.txt')
    writeFileSync(idsFile, `${ids.join('\n')}\n`)
    writeFileSync(keysFile, `${keys.join('\n')}\n`)
    const result = { key, userId: user.id, databaseUrl, idsFile, keysFile }
    writeFileSync(join(options.dir, 'meta.json'), JSON.stringify(result, null, 2))
    return result
  } finally {
    await database.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      statuses: { type: 'string', default: '10000' },
      history: { type: 'string', default: '1' },
      'database-url': { type: 'string' },
    },
  })
  if (!values.dir) throw new Error('--dir is required')
  const result = await seed({
    dir: values.dir,
    statuses: Number(values.statuses),
    history: Number(values.history),
    ...(values['database-url'] && { databaseUrl: values['database-url'] }),
  })
  process.stdout.write(`${JSON.stringify(result)}\n`)
}
