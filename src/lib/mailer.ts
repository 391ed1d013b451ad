/** One e-mail: plain text always (every client reads it), HTML optionally. */
export interface MailMessage {
  to: string
  subject: string
  text: string
  html?: string
}

/**
 * Sends e-mail (docs/accounts.md#e-mail). `send` resolves once the SMTP server accepted the
 * message and rejects with a MailError, whose message never holds the SMTP password.
 */
export interface Mailer {
  send(message: MailMessage): Promise<void>
}

/**
 * How long the SMTP client waits, so that a dead or stalled server fails a send within
 * seconds instead of nodemailer's minutes (its defaults: 2 min to connect, 10 min idle).
 * Sends happen off the request path anyway (`sendInBackground`); these bound what is held.
 */
export const SMTP_TIMEOUTS = {
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  socketTimeout: 30_000,
  dnsTimeout: 10_000,
} as const

/** A failed send, told without the SMTP password: what the log shows. */
export class MailError extends Error {
  override name = 'MailError'
  /** nodemailer's error code (`ECONNECTION`, `EAUTH`, `ETIMEDOUT`, …) when it gave one. */
  readonly code: string | undefined
  /** The SMTP reply code of a refusal (e.g. 535, 550). */
  readonly responseCode: number | undefined
  constructor(message: string, code?: string, responseCode?: number) {
    super(message)
    this.code = code
    this.responseCode = responseCode
  }
}

/** The SMTP server as a log may name it: scheme, host and port, never the credentials. */
export function describeSmtpUrl(smtpUrl: string): string {
  const url = URL.parse(smtpUrl)
  return url ? `${url.protocol}//${url.host}` : 'an SMTP server'
}

/**
 * Every form the credentials could take in text: as typed, as they appear in the URL
 * (percent-encoded) and base64 (AUTH PLAIN and LOGIN send them so).
 */
function secretsOf(smtpUrl: string): string[] {
  const url = URL.parse(smtpUrl)
  if (!url || url.password === '') return []
  const password = decodeURIComponent(url.password)
  const user = decodeURIComponent(url.username)
  return [
    url.password,
    password,
    Buffer.from(password).toString('base64'),
    Buffer.from(`\0${user}\0${password}`).toString('base64'),
    Buffer.from(`${user}\0${user}\0${password}`).toString('base64'),
  ].filter((s) => s.length > 0)
}

/** `err` as a MailError whose message holds none of `secrets` (nor the SMTP URL). */
function scrubbed(err: unknown, smtpUrl: string, secrets: string[]): MailError {
  const e = err as { message?: unknown; code?: unknown; responseCode?: unknown }
  let message = typeof e?.message === 'string' ? e.message : 'sending failed'
  message = message.split(smtpUrl).join(describeSmtpUrl(smtpUrl))
  for (const secret of secrets) message = message.split(secret).join('***')
  return new MailError(
    `could not send e-mail through ${describeSmtpUrl(smtpUrl)}: ${message}`,
    typeof e?.code === 'string' ? e.code : undefined,
    typeof e?.responseCode === 'number' ? e.responseCode : undefined,
  )
}

/**
 * A Mailer over nodemailer's SMTP transport (`smtp://user:pass@host:587`, `smtps://…:465`).
 * One connection per message: statusd sends a few messages an hour, not enough for a pool.
 * nodemailer loads at the first send, not at start: memory a server that sends no mail never
 * needs (docs/performance.md#cold-start-and-memory).
 */
export function createMailer(smtpUrl: string, from: string): Mailer {
  let transport: Promise<{ sendMail(message: object): Promise<unknown> }> | undefined
  const secrets = secretsOf(smtpUrl)
  return {
    async send(message) {
      try {
        transport ??= import('nodemailer').then(({ default: nodemailer }) =>
          nodemailer.createTransport({
            url: smtpUrl,
            ...SMTP_TIMEOUTS,
            // note: nodemailer's own logger could print the SMTP dialogue, credentials included
            logger: false,
            debug: false,
          }),
        )
        await (await transport).sendMail({ from, ...message })
      } catch (err) {
        throw scrubbed(err, smtpUrl, secrets)
      }
    },
  }
}

/** Where a failed background send is reported (Fastify's logger fits). */
export interface MailLog {
  warn(obj: object, message: string): void
}

/**
 * Sends without making anyone wait: the request that asked for the message has answered
 * already, so a slow or dead SMTP server never holds or fails it (and its timing tells nothing
 * of whether a message went out). A failure is logged, the message's address and purpose
 * with it, never its body (it holds a one-time link). Returns the send, for callers that
 * want to know (the CLI); a request handler ignores it.
 */
export function sendInBackground(
  mailer: Mailer,
  message: MailMessage,
  log: MailLog,
  what: string,
): Promise<boolean> {
  return mailer.send(message).then(
    () => true,
    (err: unknown) => {
      const error =
        err instanceof MailError ? err : new MailError(String((err as Error)?.message ?? err))
      log.warn(
        { err: { message: error.message, code: error.code, responseCode: error.responseCode } },
        `e-mail not sent (${what})`,
      )
      return false
    },
  )
}
