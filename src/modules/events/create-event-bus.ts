import type { Database } from '../../db/create-db.ts'
import { type EventBus, InProcessEventBus } from './event-bus.ts'
import { type BusLog, PgEventBus } from './pg-event-bus.ts'

/**
 * The event bus for a database: on PostgreSQL, LISTEN/NOTIFY, so that every instance on
 * the database delivers every change (SPEC §6); on SQLite (one process), in memory. The
 * only place that picks by engine: services and streams see an `EventBus` either way.
 */
export async function createEventBus(database: Database, log: BusLog): Promise<EventBus> {
  const onListenerError = (err: unknown) => log.error({ err }, 'a live-update listener failed')
  const { dedicatedClient } = database
  if (database.engine === 'postgres' && dedicatedClient) {
    const bus = new PgEventBus({
      db: database.db,
      openClient: () => dedicatedClient('listen'),
      log,
      onListenerError,
    })
    await bus.start()
    return bus
  }
  return new InProcessEventBus({ onListenerError })
}
