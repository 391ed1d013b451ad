import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { createDatabase, type Database } from '../../src/db/create-db.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { DEFAULT_PLANS, type Plans } from '../../src/modules/plans/plans.ts'
import { createUser } from '../../src/modules/users/users.service.ts'

/** Plans for tests: the built-ins plus an unlimited one, so rate limits never interfere. */
export const TEST_PLANS: Plans = {
  ...DEFAULT_PLANS,
  unlimited: {
    descriptionLinks: true,
    accessSettings: true,
    maxStatuses: null,
    requestsPerMinute: null,
    historyDays: null,
  },
}

export interface TestUser {
  id: string
  key: string
}

export interface TestApp {
  app: FastifyInstance
  database: Database
  /** Creates a user with a key. */
  user(options?: { plan?: string; verified?: boolean; name?: string }): Promise<TestUser>
  /** Injects a request as a user (or anonymously), JSON body if given. */
  request(
    as: TestUser | null,
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

/**
 * A fresh app on its own migrated in-memory database (DESIGN: no shared seeded database).
 * `databaseUrl` lets a suite run the same app on another engine.
 */
export async function makeApp(
  options: { plans?: Plans; databaseUrl?: string; busyTimeoutMs?: number } = {},
): Promise<TestApp> {
  const plans = options.plans ?? TEST_PLANS
  const database = createDatabase(
    options.databaseUrl ?? 'sqlite::memory:',
    options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs },
  )
  await migrateToLatest(database.db)
  const app = await buildApp({ database, plans })
  await app.ready()
  let counter = 0
  return {
    app,
    database,
    async user({ plan = 'unlimited', verified = true, name } = {}) {
      counter += 1
      const user = await createUser(database.db, plans, {
        name: name ?? `user ${counter}`,
        plan,
        verified,
      })
      const key = await createApiKey(database.db, user.id)
      return { id: user.id, key: key.key }
    },
    request(as, method, url, body, headers = {}) {
      return app.inject({
        method,
        url,
        headers: {
          ...(as && { 'service-api-key': as.key }),
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body !== undefined && {
          payload: typeof body === 'string' ? body : JSON.stringify(body),
        }),
      })
    },
    close: () => app.close(),
  }
}
