/**
 * A minimal cookie jar for `fetch` over a real socket: keeps what Set-Cookie sets, forgets
 * what it clears (Max-Age=0), and sends the rest back, as a browser would on one origin.
 */
export class CookieJar {
  readonly #cookies = new Map<string, string>()

  /** Takes the cookies a response sets. */
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim())
      const at = pair.indexOf('=')
      const name = pair.slice(0, at)
      const value = pair.slice(at + 1)
      const cleared = attributes.some((a) => /^max-age=0$/i.test(a)) || value === ''
      if (cleared) this.#cookies.delete(name)
      else this.#cookies.set(name, value)
    }
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name)
  }

  /** The Cookie header to send, or undefined when the jar is empty. */
  header(): string | undefined {
    if (this.#cookies.size === 0) return undefined
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ')
  }

  /**
   * fetch with the jar: sends its cookies, keeps what comes back. A write carries the page's
   * own Origin, as a browser's would.
   */
  async fetch(base: string, path: string, init: RequestInit & { json?: unknown } = {}) {
    const { json, ...rest } = init
    const headers = new Headers(rest.headers)
    const cookie = this.header()
    if (cookie !== undefined) headers.set('cookie', cookie)
    if (json !== undefined) headers.set('content-type', 'application/json')
    if (rest.method !== undefined && rest.method !== 'GET' && !headers.has('origin'))
      headers.set('origin', base)
    const res = await fetch(`${base}${path}`, {
      ...rest,
      headers,
      ...(json !== undefined && { body: JSON.stringify(json) }),
    })
    this.take(res)
    return res
  }
}
