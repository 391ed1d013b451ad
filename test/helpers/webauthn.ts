import { createServer } from 'node:net'
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import type { Json } from './processes.ts'

// Passkeys in real Chromium: the DevTools protocol's virtual authenticator stands in for the
// person's device, and a page of the service's own origin runs what the app does with
// WebAuthn (fetch options, convert base64url to bytes and back, call navigator.credentials,
// post the answer). Nothing is mocked on the server side.

/** A free TCP port on 127.0.0.1, for a server whose PUBLIC_URL must name its port up front. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      )
    })
  })
}

/**
 * What the page's script does, as plain browser JavaScript (the project's types are Node's,
 * not the DOM's): `window.passkeyClient` with `register`, `assert` and `signIn`. Each answers
 * `{ status, body }` of the last request, or `{ error }` when the browser refused.
 */
const CLIENT_SCRIPT = `
(() => {
  const b64 = {
    toBytes(s) {
      const std = s.replace(/-/g, '+').replace(/_/g, '/')
      const bin = atob(std + '='.repeat((4 - (std.length % 4)) % 4))
      return Uint8Array.from(bin, (c) => c.charCodeAt(0))
    },
    from(buffer) {
      let bin = ''
      for (const byte of new Uint8Array(buffer)) bin += String.fromCharCode(byte)
      return btoa(bin).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')
    },
  }
  async function call(method, path, body, headers = {}) {
    const res = await fetch(path, {
      method,
      headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    })
    const text = await res.text()
    let parsed = text
    try { parsed = text ? JSON.parse(text) : null } catch {}
    return { status: res.status, body: parsed }
  }
  async function create(options) {
    try {
      const cred = await navigator.credentials.create({
        publicKey: {
          ...options,
          challenge: b64.toBytes(options.challenge),
          user: { ...options.user, id: b64.toBytes(options.user.id) },
          excludeCredentials: options.excludeCredentials.map((c) => ({ ...c, id: b64.toBytes(c.id) })),
        },
      })
      return {
        response: {
          id: cred.id,
          rawId: b64.from(cred.rawId),
          type: cred.type,
          ...(cred.authenticatorAttachment && { authenticatorAttachment: cred.authenticatorAttachment }),
          clientExtensionResults: cred.getClientExtensionResults(),
          response: {
            clientDataJSON: b64.from(cred.response.clientDataJSON),
            attestationObject: b64.from(cred.response.attestationObject),
            transports: cred.response.getTransports(),
          },
        },
      }
    } catch (err) {
      return { error: err.name + ': ' + err.message }
    }
  }
  async function get(options) {
    try {
      const cred = await navigator.credentials.get({
        publicKey: { ...options, challenge: b64.toBytes(options.challenge) },
      })
      return {
        response: {
          id: cred.id,
          rawId: b64.from(cred.rawId),
          type: cred.type,
          ...(cred.authenticatorAttachment && { authenticatorAttachment: cred.authenticatorAttachment }),
          clientExtensionResults: cred.getClientExtensionResults(),
          response: {
            clientDataJSON: b64.from(cred.response.clientDataJSON),
            authenticatorData: b64.from(cred.response.authenticatorData),
            signature: b64.from(cred.response.signature),
            ...(cred.response.userHandle && { userHandle: b64.from(cred.response.userHandle) }),
          },
        },
      }
    } catch (err) {
      return { error: err.name + ': ' + err.message }
    }
  }
  window.passkeyClient = {
    call,
    /** Registration options, navigator.credentials.create(), and the answer posted. */
    async register({ headers = {}, postHeaders, name } = {}) {
      const options = await call('POST', '/v1/user/passkeys/registration-options', undefined, headers)
      if (options.status !== 200) return { step: 'options', ...options }
      const made = await create(options.body)
      if (made.error) return { step: 'create', error: made.error }
      const posted = await call('POST', '/v1/user/passkeys', { ...(name && { name }), response: made.response }, postHeaders ?? headers)
      return { step: 'register', ...posted, response: made.response }
    },
    /** Sign-in options and navigator.credentials.get(): the answer, not yet posted. */
    async assert() {
      const options = await call('POST', '/v1/auth/passkey/options')
      if (options.status !== 200) return { step: 'options', ...options }
      const got = await get(options.body.options)
      if (got.error) return { step: 'get', error: got.error }
      return { step: 'get', challengeId: options.body.challengeId, options: options.body.options, response: got.response }
    },
    /** A whole sign-in: options, navigator.credentials.get(), the answer posted. */
    async signIn() {
      const asserted = await this.assert()
      if (!asserted.response) return asserted
      const posted = await call('POST', '/v1/auth/passkey/login', { challengeId: asserted.challengeId, response: asserted.response })
      return { step: 'login', ...posted, challengeId: asserted.challengeId, response: asserted.response }
    },
  }
})()
`

/** The result of a client call in the page, as plain JSON. */
export type ClientResult = {
  step: string
  status?: number
  body?: Json
  error?: string
  challengeId?: string
  options?: Json
  response?: Json
}

/** A page on `origin` with the passkey client and its own virtual authenticator. */
export interface PasskeyPage {
  page: Page
  cdp: CDPSession
  authenticatorId: string
  /** Registers a passkey: options fetched with `headers`, the answer posted with `postHeaders` (default: the same). */
  register(options?: {
    headers?: Record<string, string>
    postHeaders?: Record<string, string>
    name?: string
  }): Promise<ClientResult>
  assert(): Promise<ClientResult>
  signIn(): Promise<ClientResult>
  /** A fetch from the page (its cookies, its origin). */
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Json }>
  /** The credentials the virtual authenticator holds. */
  credentials(): Promise<{ credentialId: string; signCount: number; userHandle?: string }[]>
}

// note: each function below runs in the page, where nothing of this module exists
type ClientCall = (...args: unknown[]) => Promise<ClientResult>
type ClientGlobal = {
  passkeyClient: { register: ClientCall; assert: ClientCall; signIn: ClientCall; call: ClientCall }
}

/**
 * Opens `origin` + `path` in a new page of `context`, with a virtual authenticator attached
 * (CTAP2, built in, keeps discoverable credentials, verifies the user): a person's device
 * with a passkey provider, whose prompts are always accepted.
 */
export async function openPasskeyPage(
  context: BrowserContext,
  origin: string,
  path = '/healthz',
): Promise<PasskeyPage> {
  const page = await context.newPage()
  await page.addInitScript(CLIENT_SCRIPT)
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })
  await page.goto(origin + path)
  // note: WebAuthn answers only a focused document (NotAllowedError otherwise), and a test
  // may hold several pages: each call brings its page to the front first
  return {
    page,
    cdp,
    authenticatorId,
    async register(options = {}) {
      await page.bringToFront()
      return page.evaluate(
        (o) => (globalThis as unknown as ClientGlobal).passkeyClient.register(o),
        options,
      )
    },
    async assert() {
      await page.bringToFront()
      return page.evaluate(() => (globalThis as unknown as ClientGlobal).passkeyClient.assert())
    },
    async signIn() {
      await page.bringToFront()
      return page.evaluate(() => (globalThis as unknown as ClientGlobal).passkeyClient.signIn())
    },
    call: (method, path, body, headers) =>
      page.evaluate(
        ([m, p, b, h]) =>
          (globalThis as unknown as ClientGlobal).passkeyClient.call(
            m,
            p,
            b ?? undefined,
            h ?? {},
          ) as unknown as Promise<{
            status: number
            body: Json
          }>,
        [method, path, body ?? null, headers ?? null] as const,
      ),
    async credentials() {
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
      return credentials
    },
  }
}
