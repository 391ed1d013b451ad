import type { FastifyInstance, onSendHookHandler, preHandlerHookHandler } from 'fastify'
import { etagMatches } from '../lib/etag.ts'

/** The conditions a write was sent with (docs/api.md#conditional-requests-etag-if-match). */
export interface Preconditions {
  /** `If-Match`: the write happens only if the current ETag is listed (`*`: if it exists). */
  ifMatch?: string
  /** `If-None-Match`: the write fails if it matches (`*`: create only). */
  ifNoneMatch?: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on the writes that declare `conditional`, before their handler runs. */
    preconditions: Preconditions
  }
}

const readPreconditions: preHandlerHookHandler = (request, _reply, done) => {
  const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = request.headers
  request.preconditions = {
    ...(ifMatch !== undefined && { ifMatch }),
    ...(ifNoneMatch !== undefined && { ifNoneMatch }),
  }
  done()
}

/**
 * A read whose ETag the client holds (If-None-Match, `W/` tags too) is answered 304 with the
 * ETag and no body. note: runs after Fastify's HEAD hook, which already made the body's
 * length a header; a 304 has none, as a HEAD of it would.
 */
const notModified: onSendHookHandler = (request, reply, payload, done) => {
  const tag = reply.getHeader('etag')
  const ifNoneMatch = request.headers['if-none-match']
  if (
    reply.statusCode !== 200 ||
    typeof tag !== 'string' ||
    ifNoneMatch === undefined ||
    !etagMatches(ifNoneMatch, tag, true)
  )
    return done(null, payload)
  reply.code(304).removeHeader('content-type')
  if (request.method === 'HEAD') reply.header('content-length', '0')
  done(null, null)
}

/**
 * Routes that declare `conditional` (docs/api.md#conditional-requests-etag-if-match): a read
 * sends its ETag and gets 304 for free when the client's copy is current; a write gets
 * `request.preconditions`, for its service to check inside the write's transaction. Call
 * before any route is registered.
 */
export function conditionalRequests(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!route.config?.conditional) return
    const reads = route.method === 'GET' || route.method === 'HEAD'
    if (reads) route.onSend = [...[route.onSend ?? []].flat(), notModified]
    else route.preHandler = [...[route.preHandler ?? []].flat(), readPreconditions]
  })
}
