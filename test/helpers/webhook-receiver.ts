import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { defer, type Lifetime } from './cleanup.ts'

/** One request a receiver got. */
export interface ReceivedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** How a receiver answers a request (by default 200 with an empty body). */
export type Answer = (
  request: ReceivedRequest,
  res: http.ServerResponse,
  index: number,
) => void | Promise<void>

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  origin: string
  /** Every request so far, in order. */
  requests: ReceivedRequest[]
  /** Resolves once `n` requests have arrived (no polling: each arrival checks). */
  received(n: number): Promise<ReceivedRequest[]>
  server: http.Server
}

/**
 * A real HTTP server on 127.0.0.1 that records what webhooks POST to it and answers as told;
 * closed (its connections too) when `t` ends.
 */
export async function startReceiver(t: Lifetime, answer?: Answer): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = []
  const waiting: { n: number; resolve: (r: ReceivedRequest[]) => void }[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      const index = requests.push(request) - 1
      for (const w of [...waiting])
        if (requests.length >= w.n) {
          waiting.splice(waiting.indexOf(w), 1)
          w.resolve(requests.slice())
        }
      try {
        if (answer) await answer(request, res, index)
        else res.end()
      } catch {
        res.destroy()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  defer(t, async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    server,
    received: (n) =>
      requests.length >= n
        ? Promise.resolve(requests.slice())
        : new Promise((resolve) => waiting.push({ n, resolve })),
  }
}
