/** One Server-Sent Event as the stream carries it. */
export interface SseMessage {
  event: string
  data: string
  /** The `id:` of this event, or undefined when it had none. */
  id: string | undefined
}

/**
 * Parses a text/event-stream body (the WHATWG HTML rules for event streams), yielding each
 * event as its blank line arrives. `onRetry` receives a `retry:` field (the reconnection
 * delay the server suggests).
 */
export async function* parseEventStream(
  body: ReadableStream<Uint8Array>,
  onRetry: (ms: number) => void,
): AsyncGenerator<SseMessage> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let event = ''
  let data: string[] = []
  let id: string | undefined
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      // a line ends at CRLF, LF or CR; a CR at the very end may be half of a CRLF
      for (
        let match = /\r\n|\n|\r(?!$)/.exec(buffer);
        match;
        match = /\r\n|\n|\r(?!$)/.exec(buffer)
      ) {
        const line = buffer.slice(0, match.index)
        buffer = buffer.slice(match.index + match[0].length)
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id }
          event = ''
          data = []
          id = undefined
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon === -1 ? line : line.slice(0, colon)
        let text = colon === -1 ? '' : line.slice(colon + 1)
        if (text.startsWith(' ')) text = text.slice(1)
        if (field === 'event') event = text
        else if (field === 'data') data.push(text)
        else if (field === 'id' && !text.includes('\0')) id = text
        else if (field === 'retry' && /^\d+$/.test(text)) onRetry(Number(text))
      }
    }
  } finally {
    // note: cancelling releases the connection when the consumer stops early
    await reader.cancel().catch(() => {})
  }
}
