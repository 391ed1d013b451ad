import type { FastifyReply } from 'fastify'
import { SESSION_ABSOLUTE_MS, SESSION_COOKIE } from '../users/sessions.service.ts'

// The session cookie (docs/accounts.md#sessions). note: needs @fastify/cookie (plugins/route-policies.ts).

/**
 * The cookie's attributes: HttpOnly (no script reads it), SameSite=Lax (a cross-site
 * sub-request or POST does not carry it; a top-level link does), Path=/, Secure when the
 * service is reached over https (PUBLIC_URL).
 */
const attributes = (publicUrl: string | null | undefined) => ({
  httpOnly: true,
  sameSite: 'lax' as const,
  path: '/',
  secure: publicUrl?.startsWith('https:') === true,
})

/** Sets the session cookie, kept by the browser as long as the session can last at most. */
export function setSessionCookie(
  reply: FastifyReply,
  token: string,
  publicUrl: string | null | undefined,
): void {
  reply.setCookie(SESSION_COOKIE, token, {
    ...attributes(publicUrl),
    maxAge: SESSION_ABSOLUTE_MS / 1000,
  })
}

/** Tells the browser to forget the session cookie. */
export function clearSessionCookie(
  reply: FastifyReply,
  publicUrl: string | null | undefined,
): void {
  reply.clearCookie(SESSION_COOKIE, attributes(publicUrl))
}
