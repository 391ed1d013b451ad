import type { Kysely } from 'kysely'
import type { DB } from '../db/database.ts'
import type { Writer } from '../db/writer.ts'
import type { Clock } from '../lib/clock.ts'
import type { Plans } from './plans/plans.ts'
import type { StatusChange, StatusEventBus } from './statuses/status-events.ts'

/**
 * What every service function takes first: the app builds one (statuses.plugin.ts), the CLI and tests
 * build their own with only what they need.
 */
export interface ServiceDeps {
  db: Kysely<DB>
  plans: Plans
  /** Told about every committed write (live updates); none in the CLI. */
  events?: StatusEventBus
  /**
   * Told on this instance of every status change it commits, before the write answers:
   * for what must not wait for the bus, which may deliver later (on PostgreSQL an instance
   * hears its own changes back through the database). The render cache of the public views
   * forgets the status, so the writer's very next read shows the change.
   */
  committed?: (change: StatusChange) => void
  /** How writes commit (group commit on SQLite); one transaction each when absent. */
  writer?: Writer
  /** Told when a status is deleted, to sweep its history (statuses/history-sweep.ts). */
  historySweep?: { kick(): void }
  /**
   * The service's external origin (PUBLIC_URL, or where it listens), for the links that
   * notifications carry; absent in the CLI (links are then paths).
   */
  linkBase?: () => string
  /** Where expiries are judged (private share links); the system clock when absent. */
  clock?: Clock
}
