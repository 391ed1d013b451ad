import type { FastifyInstance } from 'fastify'
import { backupRoutes } from './backups.routes.ts'

export interface BackupsOptions {
  /**
   * BACKUP_DIR and the database's URL (the engine's tools open it themselves), with
   * BACKUP_EVERY as written and BACKUP_KEEP; absent or null: BACKUP_DIR is not set.
   */
  backups?: { dir: string; url: string; everyMs: number | null; keep: number | null } | null
}

/** `86400000` as `24h`: BACKUP_EVERY in the unit it was most likely written in. */
function everyText(ms: number): string {
  if (ms % 86_400_000 === 0 && ms >= 2 * 86_400_000) return `${ms / 86_400_000}d`
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`
  return `${ms / 60_000}m`
}

/** The admin API of backups (docs/operations.md#backup-and-restore). */
export async function backups(app: FastifyInstance, options: BackupsOptions): Promise<void> {
  const set = options.backups ?? null
  app.keyedRoutes(backupRoutes, {
    backups:
      set === null
        ? null
        : { database: app.database, url: set.url, dir: set.dir, clock: app.clock },
    every: set?.everyMs == null ? null : everyText(set.everyMs),
    keep: set?.keep ?? null,
  })
}
