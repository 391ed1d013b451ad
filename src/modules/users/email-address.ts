import { fullFormats } from 'ajv-formats/dist/formats.js'

// E-mail addresses (docs/accounts.md#users): what statusd accepts, and how it compares them.

/** Longest address SMTP carries (RFC 5321: a 254-octet path, less its angle brackets). */
export const MAX_EMAIL_LENGTH = 254

// note: the API's own rule (its schemas' `format: 'email'`, ajv-formats' full format: ASCII,
// a dot in the domain), so that the CLI accepts exactly what the API does
const EMAIL = fullFormats.email as RegExp

/** What is wrong with an e-mail address, in a validation error's words; undefined if fine. */
export function emailProblem(email: string): string | undefined {
  if (email.length > MAX_EMAIL_LENGTH) return `must be at most ${MAX_EMAIL_LENGTH} characters`
  if (!EMAIL.test(email)) return 'must be an e-mail address, like name@example.com'
  return undefined
}

/**
 * The form addresses are compared in (the unique `email_key`): lower-cased, so
 * `Alice@Example.com` and `alice@example.com` are one address. note: the local part is
 * case-sensitive by the letter of RFC 5321, but no mail provider in use treats it so, and
 * two accounts differing only in case would be a trap.
 */
export const emailKeyOf = (email: string): string => email.toLowerCase()
