import { ClientError, clientOf, networkReason, type Sleep } from './client.ts'
import type { ClientSettings } from './client-config.ts'
import type { Output } from './output.ts'
import { type ShareView, type Status, StatusdError } from './statusd-client.ts'

export interface WatchOptions {
  output: Output
  sleep: Sleep
  signal: AbortSignal
  err: (text: string) => void
}

const UNAVAILABLE: Record<string, string> = {
  deleted: 'the status was deleted',
  notVisible: 'the status is no longer visible to you',
  unauthorized: 'the API key stopped working (revoked, expired or rotated away)',
  notVerified: 'your account is no longer verified',
}

/**
 * `statusd watch`: prints the status, then every change, until `signal` aborts. `target` is
 * your status by key, then by id (with a key), then a public status by share id (with or
 * without one). The library's watch follows the stream: a dropped connection is opened again
 * with `Last-Event-ID`, so the server sends only what changed meanwhile
 * (docs/sharing.md#live-updates-server-sent-events); the pause before it is the server's
 * `retry:`, doubling with every failure in a row up to 30 s, and is said on stderr.
 */
export async function watch(
  settings: ClientSettings,
  target: string,
  { output, sleep, signal, err }: WatchOptions,
): Promise<void> {
  const options = {
    signal,
    retries: Number.POSITIVE_INFINITY,
    onReconnect: ({ error, delayMs }: { error: unknown; delayMs: number }) => {
      if (output.json) return
      const why =
        error === undefined
          ? 'the server ended the stream'
          : error instanceof ClientError
            ? error.message
            : error instanceof StatusdError
              ? `the server answered ${error.status}`
              : `the connection dropped (${networkReason(error)})`
      err(`statusd: ${why}; reconnecting in ${Math.ceil(delayMs / 1000)} s\n`)
    },
  }
  const missing = (e: unknown) =>
    e instanceof StatusdError && (e.status === 404 || e.status === 400)
  let events: AsyncGenerator<
    { type: 'status'; status: Status | ShareView } | { type: 'unavailable'; reason: string }
  > | null = null
  try {
    if (settings.apiKey) {
      const client = clientOf(settings, sleep)
      for (const find of [() => client.getByKey(target), () => client.get(target)]) {
        const found = await find().catch((e: unknown) => {
          if (!missing(e)) throw e
        })
        if (found) {
          events = client.watch(found.id, options)
          break
        }
      }
    }
    if (!events) {
      const anonymous = clientOf(settings, sleep, null)
      await anonymous.shared(target).catch((e: unknown) => {
        if (!missing(e)) throw e
        throw new ClientError(
          `no status with the key, id or share id "${target}"${settings.apiKey ? '' : ' (without a key, only public statuses by share id)'}`,
          'notFound',
          undefined,
          404,
        )
      })
      events = anonymous.watchShared(target, options)
    }
    for await (const event of events) {
      if (event.type === 'unavailable')
        throw new ClientError(
          UNAVAILABLE[event.reason] ?? `the stream ended: ${event.reason}`,
          event.reason,
        )
      show(output, event.status)
    }
  } catch (e) {
    if (signal.aborted) return
    throw e
  }
}

/** One event: its JSON on one line with --json, else when, which, what and its pending end. */
function show(output: Output, s: Status | ShareView): void {
  const ends =
    'valueUntil' in s && s.valueUntil
      ? `  until ${s.valueUntil}${s.valueAfter === null ? '' : `, then ${s.valueAfter}`}`
      : ''
  output.out(
    output.json
      ? `${JSON.stringify(s)}\n`
      : `${s.valueUpdatedAt ?? s.updatedAt}  ${('statusKey' in s && s.statusKey) || s.name}  ${s.value ?? '(none)'}${ends}\n`,
  )
}
