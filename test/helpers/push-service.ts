import { createECDH, createPublicKey, type ECDH, randomBytes, verify } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import type { PushTransport } from '../../src/modules/notifications/webpush-channel.ts'
import { defer, type Lifetime } from './cleanup.ts'

// A browser's side of Web Push, for tests (docs/notifications.md#browser-push): a push
// subscription with real keys, a push service endpoint on loopback that takes the encrypted
// requests, and what the browser does with one: decrypt it (RFC 8291, aes128gcm, with
// `http_ece`, not the project's code) and check the VAPID signature (RFC 8292).

// note: http_ece ships no types; this is the one call the tests make
const ece = createRequire(import.meta.url)('http_ece') as {
  decrypt(
    body: Buffer,
    params: { version: 'aes128gcm'; privateKey: ECDH; authSecret: string },
  ): Buffer
}

/** A subscription as `PushSubscription.toJSON()` gives it, and the browser's private half. */
export interface TestSubscription {
  subscription: { endpoint: string; keys: { p256dh: string; auth: string } }
  /** Decrypts a request body sent to this subscription. */
  decrypt(body: Buffer): Buffer
}

/** A fresh browser key pair and auth secret, for `endpoint`. */
export function makeSubscription(endpoint: string): TestSubscription {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  const auth = randomBytes(16).toString('base64url')
  return {
    subscription: {
      endpoint,
      keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth },
    },
    decrypt: (body) =>
      ece.decrypt(body, { version: 'aes128gcm', privateKey: ecdh, authSecret: auth }),
  }
}

export interface PushRequestSeen {
  path: string
  headers: IncomingHttpHeaders
  body: Buffer
}

export interface TestPushService {
  /** `http://127.0.0.1:<port>`: endpoints are paths under it. */
  origin: string
  /** The next request not yet taken (at once if it has come, else when it does). */
  next(): Promise<PushRequestSeen>
  /** Every request so far. */
  requests(): PushRequestSeen[]
  /** What the service answers from now on (201 by default; 410 once a subscription is gone). */
  answer(statusCode: number): void
}

/** A push service endpoint on 127.0.0.1 for one test, closed when `t` ends. */
export async function startPushService(t: Lifetime): Promise<TestPushService> {
  const seen: PushRequestSeen[] = []
  const waiting: ((request: PushRequestSeen) => void)[] = []
  let taken = 0
  let statusCode = 201
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const request = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) }
      seen.push(request)
      res.writeHead(statusCode).end()
      const waiter = waiting.shift()
      if (waiter) {
        taken += 1
        waiter(request)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  defer(
    t,
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    next() {
      if (taken < seen.length) return Promise.resolve(seen[taken++] as PushRequestSeen)
      // bounded, so a push that never comes fails with a message instead of the suite's timeout
      return new Promise((resolve, reject) => {
        const late = setTimeout(() => reject(new Error('no push request within 30 s')), 30_000)
        waiting.push((request) => {
          clearTimeout(late)
          resolve(request)
        })
      })
    },
    requests: () => [...seen],
    answer(code) {
      statusCode = code
    },
  }
}

/** The VAPID claims of a request, once its ES256 signature checked out with `publicKey`. */
export function verifiedVapidClaims(
  authorization: string | undefined,
  publicKey: string,
): { aud: string; exp: number; sub: string } {
  const match = /^vapid t=([\w-]+\.[\w-]+\.[\w-]+), k=([\w-]+)$/.exec(authorization ?? '')
  if (!match) throw new Error(`not a VAPID Authorization header: ${authorization}`)
  const [, jwt = '', k = ''] = match
  if (k !== publicKey) throw new Error(`k= is ${k}, not the service's key ${publicKey}`)
  const [header = '', claims = '', signature = ''] = jwt.split('.')
  const point = Buffer.from(publicKey, 'base64url')
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33, 65).toString('base64url'),
    },
    format: 'jwk',
  })
  const ok = verify(
    'sha256',
    Buffer.from(`${header}.${claims}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  )
  if (!ok) throw new Error('the VAPID signature does not verify with the public key')
  const alg = (JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: string }).alg
  if (alg !== 'ES256') throw new Error(`JWT alg is ${alg}`)
  return JSON.parse(Buffer.from(claims, 'base64url').toString())
}

/**
 * A transport straight to the endpoint, for tests of the channel type alone (the service
 * sends through the outbound guard).
 */
export const directPushTransport: PushTransport = async ({ endpoint, headers, body }) => {
  const answer = await request(endpoint, { method: 'POST', headers, body })
  await answer.body.dump()
  return { statusCode: answer.statusCode }
}
