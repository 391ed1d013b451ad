import { statSync } from 'node:fs'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { Database } from '../db/create-db.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts an answered request in the HTTP metrics (once /metrics is registered). */
    observeResponse?(request: FastifyRequest, reply: FastifyReply): void
  }
}

export interface MetricsOptions {
  /** The SQLite files whose sizes to report (Database.files); none on PostgreSQL. */
  files?: Database['files']
}

/**
 * A file's size now: 0 when it does not exist (SQLite removes the log at a clean close), NaN
 * when it cannot be read, so that a scrape never fails for it.
 */
function sizeOf(path: string): number {
  try {
    return statSync(path, { throwIfNoEntry: false })?.size ?? 0
  } catch {
    return Number.NaN
  }
}

/**
 * Prometheus metrics at GET /metrics: process metrics plus request counts and latencies by
 * route pattern (never the raw URL, so ids do not explode the label set).
 */
export const metricsPlugin = fp(async (app: FastifyInstance, options: MetricsOptions) => {
  // one registry per app, so several apps in one process (tests) never share counters
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const labelNames = ['method', 'route', 'status_code'] as const
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered',
    labelNames,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to response',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  })

  const files = options.files
  if (files) {
    // read at each scrape: the log's size is the one to alert on, should a long reader (a
    // backup, a sqlite3 shell left open) keep it from restarting at about 64 MiB
    new Gauge({
      name: 'statusd_sqlite_wal_bytes',
      help: 'Size of the SQLite write-ahead log file (the -wal file)',
      registers: [registry],
      collect() {
        this.set(sizeOf(files.log))
      },
    })
    new Gauge({
      name: 'statusd_sqlite_database_bytes',
      help: 'Size of the SQLite database file',
      registers: [registry],
      collect() {
        this.set(sizeOf(files.database))
      },
    })
  }

  const observe = (request: FastifyRequest, reply: FastifyReply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status_code: String(reply.statusCode),
    }
    requests.inc(labels)
    duration.observe(labels, reply.elapsedTime / 1000)
  }
  app.addHook('onResponse', (request, reply, done) => {
    observe(request, reply)
    done()
  })
  // note: an error answered before routing (a malformed URL) runs no onResponse hook
  app.decorate('observeResponse', observe)

  app.get(
    '/metrics',
    { schema: { summary: 'Prometheus metrics', tags: ['operations'] } },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  )
})
