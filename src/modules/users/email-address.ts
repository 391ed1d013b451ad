// E-mail addresses (docs/accounts.md#users): what statusd accepts, and how it compares them.

/** Longest address SMTP carries (RFC 5321: a 254-octet path, less its angle brackets). */
export const MAX_EMAIL_LENGTH = 254

// note: deliberately simpler than RFC 5322 (no quoted local parts, no comments, no IP
// literals): a local part of visible characters other than the ones that delimit addresses,
// and a domain of at least two dot-separated labels of letters, digits and inner hyphens
// (letters in any script: internationalised domains are typed as people know them).
const LOCAL = /^[^\s@<>()[\]\\,;:"\p{Cc}\p{Cf}]{1,64}$/u
const LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u

/** What is wrong with an e-mail address, in a validation error's words; undefined if fine. */
export function emailProblem(email: string): string | undefined {
  if (email.length > MAX_EMAIL_LENGTH) return `must be at most ${MAX_EMAIL_LENGTH} characters`
  const at = email.lastIndexOf('@')
  const local = email.slice(0, Math.max(at, 0))
  const labels = email.slice(at + 1).split('.')
  if (
    at <= 0 ||
    !LOCAL.test(local) ||
    local.startsWith('.') ||
    local.endsWith('.') ||
    local.includes('..') ||
    labels.length < 2 ||
    !labels.every((label) => LABEL.test(label))
  )
    return 'must be an e-mail address, like name@example.com'
  return undefined
}

/**
 * The form addresses are compared in (the unique `email_key`): lower-cased, so
 * `Alice@Example.com` and `alice@example.com` are one address. note: the local part is
 * case-sensitive by the letter of RFC 5321, but no mail provider in use treats it so, and
 * two accounts differing only in case would be a trap.
 */
export const emailKeyOf = (email: string): string => email.toLowerCase()
