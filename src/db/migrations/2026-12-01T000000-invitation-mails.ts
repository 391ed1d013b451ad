import type { Kysely } from 'kysely'

// Invitation mails sent (docs/accounts.md#invitation-links): one row per message, so that
// the limits per address and per inviter hold across every instance on one database, and
// outlive the link or status that caused the message (deleting a status would otherwise
// reset the count). Rows older than a day are pruned as new ones are written.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invitation_mails')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('to_key', 'text', (c) => c.notNull())
    .addColumn('sender_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('invitation_mails_to_key')
    .on('invitation_mails')
    .columns(['to_key', 'created_at'])
    .execute()
  await db.schema
    .createIndex('invitation_mails_sender_id')
    .on('invitation_mails')
    .columns(['sender_id', 'created_at'])
    .execute()
  await db.schema
    .createIndex('invitation_mails_created_at')
    .on('invitation_mails')
    .column('created_at')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('invitation_mails').execute()
}
