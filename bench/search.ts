// The cost of GET /v1/search/statuses's query (docs/accounts.md#discovery) as statuses grow:
// N statuses of 100 owners, one in `--listed-every` listed and public, the rest private or
// unlisted; each query timed through the service, the median of `--rounds` runs.
//   node bench/search.ts --statuses 5000 [--database-url postgres://…]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { createDatabase } from '../src/db/create-database.ts'
import type { NewStatusRow } from '../src/db/database.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { newId, newShareId } from '../src/lib/ids.ts'
import { DEFAULT_PLANS } from '../src/modules/plans/plans.ts'
import { searchStatuses } from '../src/modules/statuses/search.service.ts'
import { searchableName } from '../src/modules/statuses/statuses.service.ts'

const { values } = parseArgs({
  options: {
    statuses: { type: 'string', default: '5000' },
    'listed-every': { type: 'string', default: '4' },
    rounds: { type: 'string', default: '50' },
    'database-url': { type: 'string' },
  },
})
const total = Number(values.statuses)
const listedEvery = Number(values['listed-every'])
const rounds = Number(values.rounds)
const dir = values['database-url'] ? null : mkdtempSync(join(tmpdir(), 'statusd-search-'))
const database = createDatabase(values['database-url'] ?? `sqlite:${join(dir as string, 'b.db')}`)
const WORDS = [
  'north',
  'south',
  'library',
  'station',
  'room',
  'lift',
  'gate',
  'pool',
  'lab',
  'hall',
]

try {
  await migrateToLatest(database.db)
  const { db } = database
  const owners = Array.from({ length: 100 }, (_, i) => ({
    id: newId(),
    name: `owner ${i}`,
    plan: 'free',
    verified: 1,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  }))
  await db.insertInto('users').values(owners).execute()
  const rows: NewStatusRow[] = []
  for (let i = 0; i < total; i++) {
    const name = `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${i}`
    const at = new Date(Date.UTC(2026, 1, 1) + i).toISOString()
    const listed = i % listedEvery === 0
    rows.push({
      id: newId(),
      share_id: newShareId(),
      owner_id: (owners[i % owners.length] as { id: string }).id,
      status_key: `k${i}`,
      name,
      type: 'text',
      value: 'ON',
      access_type: listed || i % 3 === 0 ? 'public' : 'private',
      description: '',
      color_no: 1,
      access_type_user_list: 'owner',
      access_type_history: 'private',
      change_count: 1,
      created_at: at,
      updated_at: at,
      value_updated_at: at,
      version: 1,
      listed: listed ? 1 : 0,
      name_search: searchableName(name),
    })
  }
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto('statuses')
      .values(rows.slice(i, i + 500))
      .execute()

  const deps = { db, plans: DEFAULT_PLANS }
  const time = async (q: string) => {
    const ms: number[] = []
    let found = 0
    for (let r = 0; r < rounds; r++) {
      const start = performance.now()
      found = (await searchStatuses(deps, { q, limit: 20 })).items.length
      ms.push(performance.now() - start)
    }
    ms.sort((a, b) => a - b)
    return { q, found, medianMs: Number((ms[Math.floor(ms.length / 2)] as number).toFixed(2)) }
  }
  const engine = values['database-url'] ? 'postgres' : 'sqlite'
  console.log(`${engine}: ${total} statuses, ${Math.ceil(total / listedEvery)} listed`)
  // a common word (a page fills at once), a rare one (every listed status read), none at all
  for (const q of ['library', `${total - listedEvery}`, 'nowhere']) console.log(await time(q))
} finally {
  await database.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
}
