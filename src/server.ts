import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.ts'
import type { Config } from './config.ts'
import { createDatabase } from './db/create-db.ts'
import { migrateToLatest } from './db/migrate.ts'
import { ensureFirstUser } from './modules/users/first-user.ts'

/** Redacted request fields: API keys never reach a log line. */
const REDACT = ['req.headers["service-api-key"]', 'req.headers.authorization']

/**
 * Process entry: config → database → migrations → first user → app → listen.
 * SIGTERM and SIGINT drain in-flight requests and close the database.
 */
export async function serve(config: Config): Promise<FastifyInstance> {
  const database = createDatabase(config.databaseUrl, { poolSize: config.databasePoolSize })
  try {
    await migrateToLatest(database.db)
  } catch (err) {
    await database.close()
    throw err
  }
  const first = await ensureFirstUser(database.db, config.plans)
  const app = await buildApp({
    database,
    plans: config.plans,
    publicUrl: config.publicUrl,
    logger: { level: config.logLevel, redact: REDACT },
  })
  if (first) printFirstKey(first.user.id, first.user.plan, first.key, config)

  const shutdown = (signal: string) => {
    app.log.info({ signal }, 'shutting down: draining requests')
    // note: close() stops accepting, waits for in-flight requests, then onClose closes storage
    app.close().then(
      () => process.exit(0),
      (err) => {
        app.log.error({ err }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.once('SIGTERM', shutdown)
  process.once('SIGINT', shutdown)

  await app.listen({ port: config.port, host: config.host })
  app.log.info({ storage: database.describe }, 'statusd ready')
  return app
}

/** The first user's key goes to the terminal once, never into the JSON log. */
function printFirstKey(userId: string, plan: string, key: string, config: Config): void {
  const base =
    config.publicUrl ??
    `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`
  process.stdout.write(
    [
      '',
      '  statusd: first start on an empty database.',
      `  Created user ${userId} (verified, plan "${plan}") and this API key, shown only now:`,
      '',
      `      ${key}`,
      '',
      `  Try:  curl -H 'service-api-key: ${key}' ${base}/v1/checkAuth`,
      '',
      '',
    ].join('\n'),
  )
}
