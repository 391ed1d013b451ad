import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify'
import { ApiError, type ErrorCode } from '../lib/errors.ts'

// note: not `import { STATUS_CODES } from 'node:http'`: an ESM import of node:http reads every
// export, and its lazy WebSocket getters load Node's whole fetch stack (cold start)
const { STATUS_CODES } = process.getBuiltinModule('node:http')

/**
 * Limits on how long a client may take (OWASP API4: slow clients must not hold sockets).
 * Node and Fastify defaults are generous (headers: 60 s; a silent socket: forever); these
 * are sane for an API whose requests are a few hundred bytes.
 */
export interface ServerTimeouts {
  /** The whole header section must arrive within this (Node's headersTimeout; default 60 s). */
  headersTimeout: number
  /** The whole request, body included (Node's requestTimeout). */
  requestTimeout: number
  /** How often Node enforces the two above (Node's connectionsCheckingInterval; default 30 s). */
  checkInterval: number
  /**
   * A socket with no traffic either way for this long is closed (Fastify's connectionTimeout;
   * default: never). note: a long-lived stream (Server-Sent Events) must send a heartbeat
   * more often than this.
   */
  connectionTimeout: number
  /** An idle keep-alive connection is closed after this (Fastify's default, 72 s: longer than
   * common load balancers' 60 s idle timeout, so the proxy always closes first). */
  keepAliveTimeout: number
}

export const SERVER_TIMEOUTS: ServerTimeouts = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  checkInterval: 1_000,
  connectionTimeout: 120_000,
  keepAliveTimeout: 72_000,
}

/** Node's limit on the request line and headers together; past it, 431. */
export const MAX_HEADER_BYTES = 16 * 1024

const CLIENT_ERRORS: Record<string, [number, ErrorCode, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'requestTimeout', 'The request did not arrive in time'],
  HPE_HEADER_OVERFLOW: [
    431,
    'requestHeadersTooLarge',
    `Request line and headers are larger than ${MAX_HEADER_BYTES} bytes`,
  ],
}

/**
 * Answers a request Node could not parse (malformed HTTP, headers too large, too slow) with the
 * error body (docs/api.md#errors), as every other error. note: Fastify's default handler writes a
 * body of another shape (`{ error, message, statusCode }`); these never reach routing or hooks.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  err: Error & { code?: string },
  socket: Duplex,
): void {
  // a reset connection has nobody to answer
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, errorCode, message] = CLIENT_ERRORS[err.code ?? ''] ?? [
    400,
    'validationError',
    'The request is not valid HTTP/1.1',
  ]
  const requestId = randomUUID()
  const body = JSON.stringify({ message, errorCode, requestId })
  // note: the code and reason only: the error also holds the raw request bytes
  // (`rawPacket`), API key header included
  this.log.debug(
    { errorCode: err.code, reason: (err as { reason?: string }).reason, requestId },
    'client error',
  )
  // note: as Node's own handler: no second response on a socket whose response has started
  // (e.g. a 401 sent before a slow body finished arriving)
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (socket.writable && !current?.headersSent)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Cache-Control: no-store\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    )
  socket.destroy()
}

/**
 * onRequest hook: an HTTP/1.1 request without a Host header is refused (RFC 9112 §3.2), with the
 * error body (docs/api.md#errors). note: Node refuses it by itself (requireHostHeader) with an
 * empty body, so that check is switched off in favour of this one.
 */
export function requireHostHeader(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined)
    throw new ApiError(400, 'validationError', 'An HTTP/1.1 request needs a Host header')
  done()
}

/** The answer a connection owes now, if any (Node's own record, which its closeIdleConnections reads). */
function answerDue(socket: Socket): ServerResponse | undefined {
  const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  return current && !current.writableFinished ? current : undefined
}

/**
 * A graceful shutdown (docs/operations.md#shutdown) that ends within moments of the last
 * answer in flight, whatever clients keep open:
 * - new connections are refused from the start (a load balancer tries another instance);
 * - every answer still to be given says `Connection: close`, so its connection closes once
 *   it is sent (without it, the client's idle keep-alive connection held the process for
 *   the 72 s keep-alive timeout);
 * - a connection that owes no answer is closed at once: idle between requests, or with a
 *   request head still arriving (once the server closes, Node no longer enforces
 *   headersTimeout or requestTimeout, so such a client would hold it for ever);
 * - a request whose body has not all arrived `requestTimeout` after the shutdown began is
 *   cut off, as the requestTimeout Node no longer enforces would have cut it;
 * - a request that reaches the app while closing (pipelined behind one in flight) is refused
 *   with 503 `unavailable` (docs/api.md#errors) and never processed. note: replaces Fastify's
 *   return503OnClosing, whose body has another shape.
 */
export function drainOnClose(
  app: FastifyInstance,
  timeouts: Pick<ServerTimeouts, 'checkInterval' | 'requestTimeout'>,
): void {
  let closing = false
  const sockets = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  const sweep = (cutOffIncomplete: boolean) => {
    for (const socket of sockets) {
      // a connection ending after its last answer closes by itself
      if (socket.destroyed || socket.writableEnded) continue
      const answer = answerDue(socket)
      if (answer === undefined || (cutOffIncomplete && !answer.req.complete)) socket.destroy()
      else if (!answer.headersSent) answer.setHeader('connection', 'close')
    }
  }
  let checks: NodeJS.Timeout | undefined
  let deadline: NodeJS.Timeout | undefined
  app.addHook('preClose', (done) => {
    closing = true
    // note: the first thing shutdown does, before open event streams end and before other
    // work is waited for (Fastify itself stops accepting only after every preClose hook):
    // a new connection is refused, which a load balancer retries on another instance,
    // rather than accepted and answered 503. Fastify's own close() later finds it closed.
    if (app.server.listening) app.server.close()
    sweep(false)
    // note: what Node's connection checks did until the server closed; an answer whose headers
    // had gone out before (keep-alive) leaves its connection idle once sent
    checks = setInterval(() => sweep(false), timeouts.checkInterval).unref()
    deadline = setTimeout(() => sweep(true), timeouts.requestTimeout).unref()
    done()
  })
  app.addHook('onClose', (_instance, done) => {
    clearInterval(checks)
    clearTimeout(deadline)
    done()
  })
  // note: a plain hook calling done (here and in core.ts): an async one costs a promise and a
  // microtask hop on every request
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done()
    reply.header('connection', 'close')
    throw new ApiError(
      503,
      'unavailable',
      'The server is shutting down; try again shortly',
      undefined,
      {
        'retry-after': '1',
      },
    )
  })
}
