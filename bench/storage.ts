// The storage floor (`npm run bench:storage`): what statusd's durable write costs SQLite
// alone, in process, with no HTTP and no JavaScript of statusd's: per PATCH one read of the
// status, one update and one history row, in batches sharing a transaction, each batch
// committed and its log fdatasync'ed, the log copied into the database and started over
// every 16 batches (statusd's checkpoint thread copies it every 512 writes and starts it
// over at 64 MiB). Prints the CPU time per write (user and system: the log's page
// writes, the fsyncs and the checkpoint's copy are system time) and the wall time of each
// step. With --returning the update also reads its row back (`returning *`), which statusd's
// no longer does. --history sets the history rows per status of the dataset, --dir keeps it
// there and reuses it on the next run (1 M statuses with 10 history rows each take a few
// minutes to seed; bench:scale --keep leaves the same datasets in /tmp/statusd-scale);
// --cache-size (KiB) and --mmap-size (bytes) set those PRAGMAs on the connection, to compare
// them. Each round also prints the CPU time of each step and the pages logged per write.
// docs/performance.md#the-floor-of-the-write, docs/decisions/0011-sqlite-at-a-million-statuses.md.
//   node bench/storage.ts [--statuses 10000] [--history 1] [--distribution uniform|zipf]
//                         [--batch 12] [--writes 24000] [--rounds 3] [--returning]
//                         [--dir DIR] [--cache-size KIB] [--mmap-size BYTES]
import {
  copyFileSync,
  fdatasyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'
import { type Distribution, seedOrReuse } from './seed.ts'

const { values } = parseArgs({
  options: {
    statuses: { type: 'string', default: '10000' },
    history: { type: 'string', default: '1' },
    distribution: { type: 'string', default: 'uniform' },
    dir: { type: 'string' },
    'cache-size': { type: 'string' },
    'mmap-size': { type: 'string' },
    batch: { type: 'string', default: '12' },
    writes: { type: 'string', default: '24000' },
    rounds: { type: 'string', default: '3' },
    returning: { type: 'boolean', default: false },
  },
})
const BATCH = Number(values.batch)
const WRITES = Number(values.writes)

const keep = values.dir !== undefined
const base = values.dir ?? mkdtempSync(join(tmpdir(), 'statusd-storage-'))
const dir = keep
  ? join(base, `n${values.statuses}-h${values.history}-${values.distribution}`)
  : base
if (keep) mkdirSync(dir, { recursive: true })
const file = join(dir, `floor-${process.pid}.db`)
try {
  const data = await seedOrReuse(
    {
      dir,
      statuses: Number(values.statuses),
      history: Number(values.history),
      distribution: values.distribution as Distribution,
    },
    'storage',
  )
  const ids = readFileSync(data.idsFile, 'utf8').trim().split('\n')
  copyFileSync(join(dir, 'seed.db'), file)
  const db = new SQLite(file)
  if (values['cache-size']) db.pragma(`cache_size = -${Number(values['cache-size'])}`)
  if (values['mmap-size']) db.pragma(`mmap_size = ${Number(values['mmap-size'])}`)
  // as a group-committed batch in statusd: the commit writes the log, an fdatasync makes it durable
  db.pragma('synchronous = NORMAL')
  db.pragma('wal_autocheckpoint = 0')
  db.pragma('foreign_keys = ON')
  const read = db.prepare('select * from statuses where id = ?')
  const update = db.prepare(
    `update statuses set value = ?, value_updated_at = ?, updated_at = ?, version = version + 1, change_count = change_count + 1 where id = ?${values.returning ? ' returning *' : ''}`,
  )
  const addHistory = db.prepare(
    'insert into status_history (status_id, change_no, value, at, by_user_id) values (?, ?, ?, ?, ?)',
  )
  const begin = db.prepare('begin immediate')
  const commit = db.prepare('commit')
  const wal = openSync(`${file}-wal`, 'r')
  let next = 0

  const run = (writes: number, label: string) => {
    const wall = { statements: 0, commit: 0, fsync: 0, checkpoint: 0 }
    const cpuOf = { statements: 0, commit: 0, fsync: 0, checkpoint: 0 }
    let frames = 0
    const cpuNow = () => {
      const { user, system } = process.cpuUsage()
      return user + system
    }
    const cpuBefore = process.cpuUsage()
    for (let b = 0; b < writes / BATCH; b++) {
      const c0 = cpuNow()
      const t0 = performance.now()
      begin.run()
      for (let i = 0; i < BATCH; i++) {
        // a stride through the ids: every write of a batch hits another status
        const id = ids[(next++ * 7919) % ids.length] as string
        const now = new Date().toISOString()
        const row = read.get(id) as { change_count: number }
        if (values.returning) update.get('80%', now, now, id)
        else update.run('80%', now, now, id)
        addHistory.run(id, row.change_count + 1, '80%', now, data.userId)
      }
      const c1 = cpuNow()
      const t1 = performance.now()
      commit.run()
      const c2 = cpuNow()
      const t2 = performance.now()
      fdatasyncSync(wal)
      const c3 = cpuNow()
      const t3 = performance.now()
      cpuOf.statements += c1 - c0
      cpuOf.commit += c2 - c1
      cpuOf.fsync += c3 - c2
      wall.statements += t1 - t0
      wall.commit += t2 - t1
      wall.fsync += t3 - t2
      if (b % 16 === 15) {
        const [result] = db.pragma('wal_checkpoint(RESTART)') as { log: number }[]
        cpuOf.checkpoint += cpuNow() - c3
        frames += result?.log ?? 0
        wall.checkpoint += performance.now() - t3
      }
    }
    const cpu = process.cpuUsage(cpuBefore)
    const us = (ms: number) => ((ms * 1000) / writes).toFixed(1)
    console.log(
      `${label}: CPU ${((cpu.user + cpu.system) / writes).toFixed(1)} µs per write (system ${(cpu.system / writes).toFixed(1)}; statements ${(cpuOf.statements / writes).toFixed(1)}, commit ${(cpuOf.commit / writes).toFixed(1)}, fdatasync ${(cpuOf.fsync / writes).toFixed(1)}, checkpoint ${(cpuOf.checkpoint / writes).toFixed(1)}); ${(frames / writes).toFixed(2)} pages logged per write; wall per write: statements ${us(wall.statements)}, commit ${us(wall.commit)}, fdatasync ${us(wall.fsync)}, checkpoint ${us(wall.checkpoint)} µs`,
    )
  }

  run(Math.min(WRITES, 2400), 'warm-up') // the page cache, the log's first pages
  console.log(
    `storage floor: ${values.statuses} statuses, ${data.historyRows} history rows, batches of ${BATCH}, ${WRITES} writes a round, cache_size ${db.pragma('cache_size', { simple: true })}, mmap_size ${db.pragma('mmap_size', { simple: true })}${values.returning ? ', the update read back' : ''}`,
  )
  for (let round = 0; round < Number(values.rounds); round++) run(WRITES, `round ${round + 1}`)
  db.close()
} finally {
  if (keep) for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true })
  else rmSync(dir, { recursive: true, force: true })
}
