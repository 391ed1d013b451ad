import type { AddressInfo } from 'node:net'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import { defer, type Lifetime } from './cleanup.ts'

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>` (with `user:password@` when the server was given credentials). */
  url: string
  /** Every message received so far, parsed, in order. */
  messages(): ParsedMail[]
  /**
   * The next message not yet taken by `next()`: at once if it has arrived, else when it does
   * (a promise the server's end of DATA resolves; no polling).
   */
  next(): Promise<ParsedMail>
  /** The credentials clients logged in with (to check what a client sent). */
  logins(): { username: string; password: string }[]
}

/**
 * A real SMTP server for one test, on 127.0.0.1 and a free port, closed when `t` ends: no
 * STARTTLS, authentication optional (accepted whatever it is, unless `refuseLogin`, which
 * answers 535 to every login, as a server does to a wrong password).
 */
export async function startSmtpServer(
  t: Lifetime,
  { credentials, refuseLogin = false }: { credentials?: string; refuseLogin?: boolean } = {},
): Promise<TestSmtpServer> {
  const received: ParsedMail[] = []
  const logins: { username: string; password: string }[] = []
  const waiting: ((mail: ParsedMail) => void)[] = []
  let taken = 0
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push({ username: auth.username ?? '', password: auth.password ?? '' })
      if (refuseLogin) {
        const err = Object.assign(new Error('Authentication credentials invalid'), {
          responseCode: 535,
        })
        return callback(err)
      }
      callback(null, { user: auth.username })
    },
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          received.push(mail)
          const waiter = waiting.shift()
          if (waiter) {
            taken += 1
            waiter(mail)
          }
          callback()
        },
        (err: Error) => callback(err),
      )
    },
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  defer(t, () => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://${credentials ? `${credentials}@` : ''}127.0.0.1:${port}`,
    messages: () => [...received],
    next() {
      if (taken < received.length) return Promise.resolve(received[taken++] as ParsedMail)
      return new Promise((resolve) => waiting.push(resolve))
    },
    logins: () => [...logins],
  }
}

/** The first link in a message's text that starts with `prefix` (a base URL and path). */
export function linkIn(mail: ParsedMail, prefix: string): string {
  const text = mail.text ?? ''
  const found = text.split(/\s+/).find((word) => word.startsWith(prefix))
  if (!found) throw new Error(`no link starting with ${prefix} in:\n${text}`)
  return found
}
