import { SseFrame, type SseStream } from '../../lib/sse.ts'

/**
 * The open streams of each board on this instance, so that a change to a board (its
 * statuses, its access) or its deletion ends them: `event: board` `{"reason": "changed" |
 * "deleted"}`, then the stream closes, and the wall reconnects to the board as it now is
 * (docs/app.md#boards-and-the-wall).
 */
export class BoardStreams {
  readonly #streams = new Map<string, Set<SseStream>>()

  add(boardId: string, stream: SseStream): void {
    let set = this.#streams.get(boardId)
    if (!set) {
      set = new Set()
      this.#streams.set(boardId, set)
    }
    set.add(stream)
    const streams = set
    stream.onClose(() => {
      streams.delete(stream)
      if (streams.size === 0 && this.#streams.get(boardId) === streams)
        this.#streams.delete(boardId)
    })
  }

  end(boardId: string, reason: 'changed' | 'deleted'): void {
    const frame = new SseFrame(`event: board\ndata: ${JSON.stringify({ reason })}\n\n`)
    for (const stream of [...(this.#streams.get(boardId) ?? [])]) {
      stream.send(frame)
      stream.close()
    }
  }

  /** Open streams of a board (tests). */
  count(boardId: string): number {
    return this.#streams.get(boardId)?.size ?? 0
  }
}
