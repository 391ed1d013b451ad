import type { Kysely } from 'kysely'

// The user's language for the mails and notifications statusd sends them
// (docs/languages.md): a code of src/i18n/languages.ts, or null for none chosen (English).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('locale', 'text').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('locale').execute()
}
