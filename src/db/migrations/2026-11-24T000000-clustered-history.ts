import { type Kysely, SqliteAdapter, sql } from 'kysely'

// SQLite only: status_history becomes a WITHOUT ROWID table, stored in the order of its
// primary key (status_id, change_no). A history page then reads its rows from one or two
// B-tree pages instead of one page per row (rows were stored in the order they were
// written, interleaved across every status): 5–7× less work per page at 10 M rows
// (docs/performance.md). PostgreSQL keeps its heap table and primary-key index.
//
// note: engine-specific (DESIGN.md allows it behind the dialect switch). The rebuild copies
// every history row once: about 35 s for 10 M rows, at the first start of this version.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return
  // one transaction: a crash leaves the old table or the new one, never neither (the
  // migrator runs SQLite migrations outside a transaction)
  await db.transaction().execute(async (tx) => {
    await tx.schema
      .createTable('status_history_clustered')
      .addColumn('status_id', 'text', (c) =>
        c.notNull().references('statuses.id').onDelete('cascade'),
      )
      .addColumn('change_no', 'integer', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('by_user_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('status_history_pk', ['status_id', 'change_no'])
      .modifyEnd(sql`without rowid`)
      .execute()
    await sql`insert into status_history_clustered (status_id, change_no, value, at, by_user_id)
      select status_id, change_no, value, at, by_user_id from status_history
      order by status_id, change_no`.execute(tx)
    await tx.schema.dropTable('status_history').execute()
    await tx.schema.alterTable('status_history_clustered').renameTo('status_history').execute()
  })
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return
  await db.transaction().execute(async (tx) => {
    await tx.schema
      .createTable('status_history_rowid')
      .addColumn('status_id', 'text', (c) =>
        c.notNull().references('statuses.id').onDelete('cascade'),
      )
      .addColumn('change_no', 'integer', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('by_user_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('status_history_pk', ['status_id', 'change_no'])
      .execute()
    await sql`insert into status_history_rowid (status_id, change_no, value, at, by_user_id)
      select status_id, change_no, value, at, by_user_id from status_history`.execute(tx)
    await tx.schema.dropTable('status_history').execute()
    await tx.schema.alterTable('status_history_rowid').renameTo('status_history').execute()
  })
}
