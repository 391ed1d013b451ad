import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type {
  FastifyHttpOptions,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from 'fastify'
import { KEY_LIKE } from '../lib/redact.ts'
import { API_RESPONSE_HEADERS } from '../lib/response-headers.ts'
import {
  clientErrorHandler,
  MAX_HEADER_BYTES,
  SERVER_TIMEOUTS,
  type ServerTimeouts,
} from './connections.ts'
import { BODY_LIMIT, sendError } from './error-handler.ts'

const REQUEST_ID = /^[\w.:-]{1,64}$/

/** What the server's options are made of (AppDeps, app.ts). */
export interface ServerOptionsInput {
  /** Fastify's logger option; tests pass false. */
  logger?: FastifyServerOptions['logger']
  /**
   * Which proxies' X-Forwarded-For names the client (TRUST_PROXY): Fastify's `trustProxy` (a
   * hop count, or proxy addresses and CIDR ranges). Default: none, the peer is the client.
   */
  trustProxy?: false | number | string | string[]
  /** Overrides of SERVER_TIMEOUTS (tests shorten them). */
  timeouts?: Partial<ServerTimeouts>
}

/** The pages that answer their own errors (the share page and badge: web/web.routes.ts). */
export interface PageErrors {
  /** Whether a URL as requested is one of theirs. */
  owns(url: string): boolean
  send(err: Error, request: FastifyRequest, reply: FastifyReply): unknown
}

/**
 * Fastify's server options: the logger, who the client is, the limits and timeouts of
 * connections, request ids, the router, the answers to errors raised before routing.
 */
export function serverOptions(
  input: ServerOptionsInput,
  pages: PageErrors,
): {
  options: FastifyHttpOptions<Server>
  timeouts: ServerTimeouts
} {
  const timeouts = { ...SERVER_TIMEOUTS, ...input.timeouts }
  const trust = input.trustProxy ?? false
  const options: FastifyHttpOptions<Server> = {
    logger: input.logger ?? false,
    // who the client is (request.ip), for the per-client limits (docs/operations.md#limits-per-client);
    // note: a hop count n is given as the function Fastify itself makes of one (trust the
    // nearest n hops), since its types leave numbers out
    trustProxy: typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust,
    bodyLimit: BODY_LIMIT,
    // slow clients are cut off (OWASP API4): see SERVER_TIMEOUTS
    requestTimeout: timeouts.requestTimeout,
    connectionTimeout: timeouts.connectionTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    http: {
      headersTimeout: timeouts.headersTimeout,
      requestTimeout: timeouts.requestTimeout,
      connectionsCheckingInterval: timeouts.checkInterval,
      maxHeaderSize: MAX_HEADER_BYTES,
      // answered by requireHostHeader instead, with an error body (Node's has none)
      requireHostHeader: false,
    },
    clientErrorHandler,
    // answered by drainOnClose instead, with the API's error body (docs/api.md#errors)
    return503OnClosing: false,
    // an upstream proxy's request id is kept when it looks like one; otherwise a fresh one
    requestIdHeader: false,
    genReqId: (req) => {
      const upstream = req.headers['x-request-id']
      // note: never echo (and log) something that may hold an API key (KEY_LIKE) as a request id
      return typeof upstream === 'string' && REQUEST_ID.test(upstream) && !KEY_LIKE.test(upstream)
        ? upstream
        : randomUUID()
    },
    routerOptions: {
      ignoreTrailingSlash: true,
      // as long as a URL can be (Node caps headers at 16 KiB): an over-long key gets
      // 400 invalidStatusKey from its own check, never a router 414
      maxParamLength: 16_384,
    },
    // errors raised before routing (malformed URL) get the API's error body too, or on the share
    // page's and badge's paths their page or badge; note: they skip the onSend hooks, so the
    // request id and the API's headers are set here
    frameworkErrors: (err, request, reply) => {
      reply.header('x-request-id', request.id)
      reply.raw.once('finish', () => request.server.observeResponse?.(request, reply))
      if (pages.owns(request.url)) return pages.send(err, request, reply)
      reply.headers(API_RESPONSE_HEADERS)
      sendError(err, request, reply)
    },
  }
  return { options, timeouts }
}
