// The storage floor (`npm run bench:storage`): what statusd's durable write costs SQLite
// alone, in process, with no HTTP and no JavaScript of statusd's: per PATCH one read of the
// status, one update and one history row, in batches sharing a transaction, each batch
// committed and its log fdatasync'ed, the log copied into the database and started over
// every 16 batches (statusd's checkpoint thread copies it every 512 writes and starts it
// over at 64 MiB). Prints the CPU time per write (user and system: the log's page
// writes, the fsyncs and the checkpoint's copy are system time) and the wall time of each
// step. With --returning the update also reads its row back (`returning *`), which statusd's
// no longer does. docs/performance.md#the-floor-of-the-write.
//   node bench/storage.ts [--statuses 10000] [--batch 12] [--writes 24000] [--rounds 3] [--returning]
import { copyFileSync, fdatasyncSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import SQLite from 'better-sqlite3'
import { seed } from './seed.ts'

const { values } = parseArgs({
  options: {
    statuses: { type: 'string', default: '10000' },
    batch: { type: 'string', default: '12' },
    writes: { type: 'string', default: '24000' },
    rounds: { type: 'string', default: '3' },
    returning: { type: 'boolean', default: false },
  },
})
const BATCH = Number(values.batch)
const WRITES = Number(values.writes)

const dir = mkdtempSync(join(tmpdir(), 'statusd-storage-'))
try {
  const data = await seed({ dir, statuses: Number(values.statuses), history: 1 })
  const ids = readFileSync(data.idsFile, 'utf8').trim().split('\n')
  const file = join(dir, 'floor.db')
  copyFileSync(join(dir, 'seed.db'), file)
  const db = new SQLite(file)
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

  const run = (writes: number) => {
    const wall = { statements: 0, commit: 0, fsync: 0, checkpoint: 0 }
    const cpuBefore = process.cpuUsage()
    for (let b = 0; b < writes / BATCH; b++) {
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
      const t1 = performance.now()
      commit.run()
      const t2 = performance.now()
      fdatasyncSync(wal)
      const t3 = performance.now()
      wall.statements += t1 - t0
      wall.commit += t2 - t1
      wall.fsync += t3 - t2
      if (b % 16 === 15) {
        db.pragma('wal_checkpoint(RESTART)')
        wall.checkpoint += performance.now() - t3
      }
    }
    const cpu = process.cpuUsage(cpuBefore)
    const us = (ms: number) => ((ms * 1000) / writes).toFixed(1)
    console.log(
      `CPU ${((cpu.user + cpu.system) / writes).toFixed(1)} µs per write (system ${(cpu.system / writes).toFixed(1)}); wall per write: statements ${us(wall.statements)}, commit ${us(wall.commit)}, fdatasync ${us(wall.fsync)}, checkpoint ${us(wall.checkpoint)} µs`,
    )
  }

  run(Math.min(WRITES, 2400)) // warm-up: the page cache, the log's first pages
  console.log(
    `storage floor: ${values.statuses} statuses, batches of ${BATCH}, ${WRITES} writes a round${values.returning ? ', the update read back' : ''}`,
  )
  for (let round = 0; round < Number(values.rounds); round++) run(WRITES)
  db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
