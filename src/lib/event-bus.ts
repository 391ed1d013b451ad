import type { FastifyBaseLogger } from 'fastify'

/** Called with every message of the topic it subscribed to. */
export type Listener<M> = (message: M) => void

/**
 * Where writers announce what they committed and listeners (live streams) hear about it, by
 * topic. `M` is the message.
 *
 * note: `publish` is called after the transaction commits and never throws: the write has
 * happened, so a delivery failure is the bus's to log, not the writer's to report. Listeners
 * must return at once (they schedule work; they never block the publisher).
 */
export interface EventBus<M> {
  publish(message: M): Promise<void>
  /**
   * Optional: true for a bus between processes that can lose a message (one published after
   * a commit by a process that died before it could, or one the network dropped). Writers
   * then also record every change in the outbox inside its transaction, which every process
   * reads (docs/postgres.md#the-outbox-changes-no-notification-can-lose): what the bus loses
   * arrives from there, a moment later.
   */
  readonly relayedByOutbox?: boolean
  /** Calls `listener` for every message of `topic` until the returned function is called. */
  subscribe(topic: string, listener: Listener<M>): () => void
  /**
   * Optional: registers a callback for after a gap in delivery (a connection between
   * processes that dropped and came back). Messages in the gap were lost, so listeners
   * re-read what they show.
   */
  onResync?(listener: () => void): void
  /** Stops delivering and releases resources (a connection, say). */
  close(): Promise<void>
}

/** What a bus logs through (a Fastify/pino logger fits). */
export type BusLog = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>

/** How a kind of message travels on a bus: its topic, and its JSON read back between processes. */
export interface MessageFormat<M> {
  /** The topic a message belongs to (what `subscribe` names). */
  topicOf(message: M): string
  /** A message back from its JSON text; undefined for anything that is not one. */
  parse(text: string | undefined): M | undefined
}

export interface InProcessEventBusOptions<M> {
  /** The topic a message belongs to (what `subscribe` names). */
  topicOf(message: M): string
  /** Called when a listener throws; the other listeners still get the message. */
  onListenerError?: (err: unknown) => void
}

/**
 * The bus of a single process: messages go straight to the listeners of the same process. A
 * bus between processes feeds what it hears into one of these (`dispatch`), so every process
 * delivers every message.
 */
export class InProcessEventBus<M> implements EventBus<M> {
  readonly #listeners = new Map<string, Set<Listener<M>>>()
  readonly #topicOf: (message: M) => string
  readonly #onListenerError: (err: unknown) => void
  #closed = false

  constructor(options: InProcessEventBusOptions<M>) {
    this.#topicOf = options.topicOf
    this.#onListenerError = options.onListenerError ?? (() => {})
  }

  async publish(message: M): Promise<void> {
    this.dispatch(message)
  }

  /** Delivers a message to this process's listeners (what a bus between processes calls). */
  dispatch(message: M): void {
    if (this.#closed) return
    const listeners = this.#listeners.get(this.#topicOf(message))
    if (!listeners) return
    // a copy: a listener may unsubscribe (itself or another) while we iterate
    for (const listener of [...listeners]) {
      try {
        listener(message)
      } catch (err) {
        this.#onListenerError(err)
      }
    }
  }

  subscribe(topic: string, listener: Listener<M>): () => void {
    let set = this.#listeners.get(topic)
    if (!set) {
      set = new Set()
      this.#listeners.set(topic, set)
    }
    set.add(listener)
    return () => {
      const current = this.#listeners.get(topic)
      if (!current) return
      current.delete(listener)
      // no empty sets left behind: a topic nobody listens to costs nothing
      if (current.size === 0) this.#listeners.delete(topic)
    }
  }

  /** Listeners of one topic (tests use it to prove streams clean up after themselves). */
  listenerCount(topic: string): number {
    return this.#listeners.get(topic)?.size ?? 0
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#listeners.clear()
  }
}
