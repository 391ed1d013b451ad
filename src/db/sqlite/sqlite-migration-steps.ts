import { type Kysely, sql } from 'kysely'
import type { MigrationSteps } from '../engine.ts'

// The engine-specific steps of statusd's migrations on SQLite. Each rebuild keeps its own copy
// of the columns as the migrations before it made them: a migration's result never changes.

/** What `pragma foreign_keys` answers. */
interface Pragma {
  foreign_keys: number
}

/**
 * Rebuilds status_history in one transaction, stored WITHOUT ROWID or not, its status_id
 * referencing statuses (ON DELETE CASCADE) or not: a new table,
 * every row copied in key order, the old table dropped and the new one renamed. A crash
 * leaves the old table or the new one, never neither (the migrator runs SQLite migrations
 * outside a transaction).
 */
async function rebuildHistory(
  db: Kysely<unknown>,
  clustered: boolean,
  referencesStatuses = true,
): Promise<void> {
  // note: the columns as the initial migration made them; a migration keeps its own copy
  await db.transaction().execute(async (tx) => {
    await tx.schema
      .createTable('status_history_rebuilt')
      .addColumn('status_id', 'text', (c) =>
        referencesStatuses
          ? c.notNull().references('statuses.id').onDelete('cascade')
          : c.notNull(),
      )
      .addColumn('change_no', 'integer', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('by_user_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('status_history_pk', ['status_id', 'change_no'])
      .$call((table) => (clustered ? table.modifyEnd(sql`without rowid`) : table))
      .execute()
    await sql`insert into status_history_rebuilt (status_id, change_no, value, at, by_user_id)
      select status_id, change_no, value, at, by_user_id from status_history
      order by status_id, change_no`.execute(tx)
    await tx.schema.dropTable('status_history').execute()
    await tx.schema.alterTable('status_history_rebuilt').renameTo('status_history').execute()
  })
}

/**
 * Rebuilds statuses in one transaction, stored WITHOUT ROWID or not: a new table, every row
 * copied in key order, the old table dropped and the new one renamed, its list index made
 * again (covering the list's columns when clustered).
 * A crash leaves the old table or the new one, never neither (the migrator runs SQLite
 * migrations outside a transaction).
 *
 * statuses is the parent of status_history and status_roles. Dropping a parent with foreign
 * keys on would first delete every row that references it (their ON DELETE CASCADE), so
 * SQLite's foreign keys are off while the rebuild runs (SQLite's own recipe for changing a
 * table, "Making Other Kinds Of Table Schema Changes") and every reference is checked
 * before the commit.
 */
async function rebuildStatuses(db: Kysely<unknown>, clustered: boolean): Promise<void> {
  await sql`pragma foreign_keys = off`.execute(db)
  try {
    // note: the pragma is a no-op inside a transaction; were this ever run inside one, the
    // drop below would cascade into every history row, so it refuses instead
    const { rows } = await sql<Pragma>`pragma foreign_keys`.execute(db)
    if (rows[0]?.foreign_keys !== 0)
      throw new Error('clustered-statuses: foreign keys could not be switched off; nothing changed')
    await db.transaction().execute(async (tx) => {
      // note: the columns as the initial and sharing migrations made them; a migration keeps
      // its own copy
      await tx.schema
        .createTable('statuses_rebuilt')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('share_id', 'text', (c) => c.notNull().unique())
        .addColumn('owner_id', 'text', (c) =>
          c.notNull().references('users.id').onDelete('cascade'),
        )
        .addColumn('status_key', 'text')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('value', 'text')
        .addColumn('access_type', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('color_no', 'integer', (c) => c.notNull())
        .addColumn('access_type_user_list', 'text', (c) => c.notNull())
        .addColumn('access_type_history', 'text', (c) => c.notNull())
        .addColumn('change_count', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('value_updated_at', 'text')
        .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
        .addUniqueConstraint('statuses_owner_key', ['owner_id', 'status_key'])
        .$call((table) => (clustered ? table.modifyEnd(sql`without rowid`) : table))
        .execute()
      await sql`insert into statuses_rebuilt (id, share_id, owner_id, status_key, name, type,
          value, access_type, description, color_no, access_type_user_list,
          access_type_history, change_count, created_at, updated_at, value_updated_at, version)
        select id, share_id, owner_id, status_key, name, type,
          value, access_type, description, color_no, access_type_user_list,
          access_type_history, change_count, created_at, updated_at, value_updated_at, version
        from statuses order by id`.execute(tx)
      // with foreign keys off, the drop takes the table and its indexes, nothing else
      await tx.schema.dropTable('statuses').execute()
      await tx.schema.alterTable('statuses_rebuilt').renameTo('statuses').execute()
      // a list page reads (owner_id, created_at, id) and shows status_key, share_id, name
      await tx.schema
        .createIndex('statuses_owner_created')
        .on('statuses')
        .columns([
          'owner_id',
          'created_at',
          'id',
          ...(clustered ? ['status_key', 'share_id', 'name'] : []),
        ])
        .execute()
      // every history row, role and status still has what it references, or nothing commits
      const dangling = await sql`pragma foreign_key_check`.execute(tx)
      if (dangling.rows.length > 0)
        throw new Error(
          `clustered-statuses: ${dangling.rows.length} rows would lose what they reference; nothing changed`,
        )
    })
  } finally {
    await sql`pragma foreign_keys = on`.execute(db)
  }
}

/** SQLite's steps: its tables are stored in primary-key order; its INTEGER is 64-bit already. */
export const sqliteMigrationSteps: MigrationSteps = {
  // one database, no schemas
  bookkeepingSchema: async () => undefined,
  clusteredHistory: (db, direction) => rebuildHistory(db, direction === 'up'),
  clusteredStatuses: (db, direction) => rebuildStatuses(db, direction === 'up'),
  bigintCounters: async () => {},
  // SQLite cannot drop a reference in place: the table is rebuilt (clustered, as it is by then)
  historyWithoutStatusReference: (db, direction) => rebuildHistory(db, true, direction === 'down'),
  // one process: nothing to order between instances; the column stays null (copy moves it)
  outboxCommitOrder: async (db, direction) => {
    if (direction === 'up')
      await db.schema.alterTable('outbox_events').addColumn('tx_id', 'text').execute()
    else await db.schema.alterTable('outbox_events').dropColumn('tx_id').execute()
  },
  // one process serves a SQLite database: it counts requests in its own memory
  rateLimitCounters: async () => {},
}
