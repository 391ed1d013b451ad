import { createParser } from 'eventsource-parser'

/** One Server-Sent Event as the stream carries it. */
export interface SseMessage {
  event: string
  data: string
  /** The `id:` of this event, or undefined when it had none. */
  id: string | undefined
}

/**
 * The events of a text/event-stream body, each as its blank line arrives: parsed by
 * eventsource-parser (the WHATWG HTML rules for event streams). `onRetry` receives a `retry:`
 * field (the reconnection delay the server suggests).
 */
export async function* parseEventStream(
  body: ReadableStream<Uint8Array>,
  onRetry: (ms: number) => void = () => {},
): AsyncGenerator<SseMessage> {
  const parsed: SseMessage[] = []
  const parser = createParser({
    onEvent: ({ event, data, id }) => parsed.push({ event: event ?? 'message', data, id }),
    onRetry,
  })
  const reader = body.getReader()
  const decoder = new TextDecoder()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      parser.feed(decoder.decode(value, { stream: true }))
      yield* parsed.splice(0)
    }
  } finally {
    // note: cancelling releases the connection when the consumer stops early
    await reader.cancel().catch(() => {})
  }
}
