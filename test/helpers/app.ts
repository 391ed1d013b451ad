import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { type AppDeps, buildApp } from '../../src/app.ts'
import { createDatabase } from '../../src/db/create-database.ts'
import type { Database } from '../../src/db/engine.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { createApiKey } from '../../src/modules/keys/keys.service.ts'
import { DEFAULT_PLANS, type Plans } from '../../src/modules/plans/plans.ts'
import { createUser } from '../../src/modules/users/users.service.ts'
import { defer, type Lifetime } from './cleanup.ts'
import { checkedInject, servedContract, watchFetches } from './contract.ts'
import { freshDatabase, migratedCopy } from './engine.ts'

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
  /**
   * Injects a request as a user (or anonymously), JSON body if given (a string or Buffer as is);
   * a header given as `undefined` is not sent (`content-type`: a body without one).
   */
  request(
    as: TestUser | null,
    method: InjectOptions['method'],
    url: string,
    body?: unknown,
    headers?: Record<string, string | undefined>,
  ): Promise<LightMyRequestResponse>
  /**
   * Closes the app now, for a test about what happens then; otherwise the end of the test
   * does it (and drops its database). Safe to call more than once.
   */
  close(): Promise<void>
}

/**
 * A fresh app on its own migrated database (no shared seeded database): a copy of a database
 * migrated once per process (engine.ts migratedCopy), in-memory SQLite or on the PostgreSQL
 * run (TEST_ENGINE=postgres) a database of its own (a schema of its own, migrated, when the
 * role cannot create databases). Both go when
 * `t` ends (the test's context, or `{ after }` for an app a suite shares): no test closes it.
 * `databaseUrl` puts the app on a database the caller manages instead.
 */
export async function makeApp(
  t: Lifetime,
  options: {
    plans?: Plans
    databaseUrl?: string
    keyCacheTtlMs?: number
    busyTimeoutMs?: number
    /** More of buildApp's dependencies (an event bus, SSE tuning, a clock). */
    deps?: Omit<Partial<AppDeps>, 'database' | 'plans'>
  } = {},
): Promise<TestApp> {
  const plans = options.plans ?? TEST_PLANS
  // a copy of a database migrated once per process; else migrated below
  const copy = options.databaseUrl === undefined ? await migratedCopy() : undefined
  const fresh = copy ?? (options.databaseUrl === undefined ? await freshDatabase() : undefined)
  if (fresh) defer(t, () => fresh.drop())
  const database = createDatabase(options.databaseUrl ?? (fresh?.url as string), {
    poolSize: 5,
    ...fresh?.options,
    ...(options.busyTimeoutMs !== undefined && { busyTimeoutMs: options.busyTimeoutMs }),
  })
  let app: FastifyInstance | undefined
  let closing: Promise<void> | undefined
  // note: the app closes the database; until there is an app, the database is closed alone
  const close = () => {
    closing ??= app ? app.close() : database.close()
    return closing
  }
  defer(t, close)
  // a copy holds every migration already (engine.ts migratedCopy): only a fresh database, or
  // one the caller manages, is migrated here
  if (!copy) await migrateToLatest(database.db)
  // note: no key cache unless a test asks for one, so that changes made behind the app's
  // back (revocation through a service, a user unverified) show on the very next request
  app = await buildApp({
    keyCacheTtlMs: options.keyCacheTtlMs ?? 0,
    ...options.deps,
    database,
    plans,
  })
  await app.ready()
  const built = app
  // every answer a test receives is checked against the served OpenAPI document
  // (contract.ts): through `request`, and through `fetch` once the app listens
  built.server.once('listening', () => {
    const address = built.server.address()
    if (address === null || typeof address === 'string') return
    const unwatch = watchFetches(`http://127.0.0.1:${address.port}`, () => servedContract(built))
    built.server.once('close', unwatch)
  })
  let counter = 0
  return {
    app: built,
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
    async request(as, method, url, body, headers = {}) {
      const response = await built.inject({
        method,
        url,
        headers: {
          ...(as && { 'service-api-key': as.key }),
          ...(body !== undefined && { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body !== undefined && {
          payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
        }),
      })
      return checkedInject(built, String(method ?? 'GET'), url, response)
    },
    close,
  }
}
