import type { AddressInfo } from 'node:net'
import { connect, createServer, type Socket } from 'node:net'
import { defer, type Lifetime } from './cleanup.ts'

/**
 * A TCP proxy on loopback in front of a server, for clients to lose their connection in the
 * ways networks lose it: `cut()` closes every open connection (a dropped event stream),
 * `dropNextResponse()` closes the connection as the next answer starts (the server did the
 * work, the client never hears of it), `answerNext(raw)` answers the next request itself (a
 * 503 from a load balancer) without reaching the server, and `hold()` keeps new connections
 * waiting until `release()`.
 */
export interface TcpProxy {
  base: string
  /** Connections accepted so far. */
  readonly connections: number
  /** Answers given to `answerNext` not used yet. */
  readonly unanswered: number
  cut(): void
  dropNextResponse(): void
  answerNext(raw: string): void
  hold(): void
  release(): void
}

export async function tcpProxy(
  t: Lifetime,
  target: { host: string; port: number },
): Promise<TcpProxy> {
  const open = new Set<Socket>()
  let connections = 0
  let dropNext = false
  const canned: string[] = []
  let held: (() => void)[] | null = null

  const server = createServer((client) => {
    connections += 1
    open.add(client)
    client.on('error', () => {})
    let upstream: Socket | undefined
    const pending: Buffer[] = []
    client.on('close', () => {
      open.delete(client)
      upstream?.destroy()
    })
    // note: a request may come on a kept-alive connection: each one is looked at as it arrives
    let answered = false
    client.on('data', (chunk: Buffer) => {
      // the rest of a request answered here (a body after its head) is not another request
      if (answered) return
      const answer = canned.shift()
      if (answer !== undefined) {
        answered = true
        // answered here; the server never sees it
        upstream?.destroy()
        client.end(answer)
      } else if (upstream?.readyState === 'open') upstream.write(chunk)
      else pending.push(chunk)
    })
    const pipe = () => {
      if (client.destroyed) return
      const up = connect(target.port, target.host, () => {
        for (const chunk of pending.splice(0)) up.write(chunk)
      })
      upstream = up
      open.add(up)
      up.on('error', () => client.destroy())
      up.on('close', () => {
        open.delete(up)
        client.destroy()
      })
      up.on('data', (chunk) => {
        if (dropNext) {
          dropNext = false
          up.destroy()
          client.destroy()
          return
        }
        client.write(chunk)
      })
    }
    if (held) held.push(pipe)
    else pipe()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  defer(t, () => {
    for (const socket of open) socket.destroy()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const { port } = server.address() as AddressInfo
  return {
    base: `http://127.0.0.1:${port}`,
    get connections() {
      return connections
    },
    get unanswered() {
      return canned.length
    },
    cut() {
      for (const socket of open) socket.destroy()
    },
    dropNextResponse() {
      dropNext = true
    },
    answerNext(raw) {
      canned.push(raw)
    },
    hold() {
      held ??= []
    },
    release() {
      const waiting = held ?? []
      held = null
      for (const go of waiting) go()
    },
  }
}
