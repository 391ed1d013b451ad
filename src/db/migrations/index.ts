import type { Migration } from 'kysely/migration'
import * as initial from './2026-11-29T000000-initial.ts'
import * as operators from './2026-11-30T000000-operators.ts'
import * as ends from './2026-12-01T010000-ends.ts'
import * as schedules from './2026-12-01T020000-schedules.ts'
import * as rules from './2026-12-01T030000-rules.ts'
import * as locale from './2026-12-02T040000-locale.ts'
import * as mqtt from './2026-12-02T050000-mqtt.ts'

/** Every migration, by name; names sort in the order they apply. From 0.1.0 on, only appended. */
export const migrations: Record<string, Migration> = {
  '2026-11-29T000000-initial': initial,
  '2026-11-30T000000-operators': operators,
  '2026-12-01T010000-ends': ends,
  '2026-12-01T020000-schedules': schedules,
  '2026-12-01T030000-rules': rules,
  '2026-12-02T040000-locale': locale,
  '2026-12-02T050000-mqtt': mqtt,
}
