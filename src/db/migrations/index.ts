import type { Migration } from 'kysely/migration'
import * as initial from './2026-11-29T000000-initial.ts'

/** Every migration, by name; names sort in the order they apply. */
export const migrations: Record<string, Migration> = {
  '2026-11-29T000000-initial': initial,
}
