import type { Kysely } from 'kysely'

// Values that end (docs/api.md#values-that-end): a status's pending end, and which history
// entries the timed worker wrote (src/modules/timed).

export async function up(db: Kysely<unknown>): Promise<void> {
  // `value_until`: when the current value ends (null: it does not); `value_after`: the value
  // written then; `value_until_by`: the user who set the end, for whom the end is written
  await db.schema.alterTable('statuses').addColumn('value_until', 'text').execute()
  await db.schema.alterTable('statuses').addColumn('value_after', 'text').execute()
  await db.schema.alterTable('statuses').addColumn('value_until_by', 'text').execute()
  // the timed worker reads only what is due, and the earliest end
  await db.schema.createIndex('statuses_value_until').on('statuses').column('value_until').execute()
  // `via`: 'schedule' for a value the timed worker wrote (an end, a schedule's fire); null
  // for an ordinary write
  await db.schema.alterTable('status_history').addColumn('via', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('status_history').dropColumn('via').execute()
  await db.schema.dropIndex('statuses_value_until').execute()
  await db.schema.alterTable('statuses').dropColumn('value_until_by').execute()
  await db.schema.alterTable('statuses').dropColumn('value_after').execute()
  await db.schema.alterTable('statuses').dropColumn('value_until').execute()
}
