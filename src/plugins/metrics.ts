import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { StorageGauge } from '../db/engine.ts'
import type { StreamQuota } from '../lib/client-limits.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts an answered request in the HTTP metrics (once /metrics is registered). */
    observeResponse?(request: FastifyRequest, reply: FastifyReply): void
  }
}

export interface MetricsOptions {
  /** What the storage reports about itself (`Database.gauges`). */
  gauges?: readonly StorageGauge[]
  /** The live streams, counted against the server-wide capacity. */
  streams?: StreamQuota
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

  // the storage's own gauges (file sizes), read at each scrape
  for (const gauge of options.gauges ?? [])
    new Gauge({
      name: gauge.name,
      help: gauge.help,
      registers: [registry],
      collect() {
        this.set(gauge.read())
      },
    })

  // what the server-wide stream capacity and connection cap hold back
  // (docs/operations.md#server-wide-stream-capacity)
  const streams = options.streams
  if (streams) {
    new Gauge({
      name: 'statusd_streams_open',
      help: 'Live event streams open on this instance',
      registers: [registry],
      collect() {
        this.set(streams.total)
      },
    })
    new Gauge({
      name: 'statusd_streams_capacity',
      help: 'Most live event streams this instance holds at once',
      registers: [registry],
      collect() {
        this.set(streams.capacity)
      },
    })
  }
  const dropped = new Counter({
    name: 'statusd_connections_dropped_total',
    help: 'Connections closed as they arrived: the connection cap was reached',
    registers: [registry],
  })
  app.server.on('drop', () => dropped.inc())

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
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        tags: ['operations'],
        response: {
          // for the OpenAPI document only: the text is sent as it is, nothing serializes it
          200: {
            description:
              'The metrics in the Prometheus text format (docs/api.md#health-probes-and-metrics)',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
      },
    },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  )
})
