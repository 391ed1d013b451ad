import { batch, signal } from '@preact/signals'
import { ApiError, api, whenSignedOut } from './api.ts'
import { showStartingLanguage } from './i18n.ts'
import { navigate } from './router.tsx'
import type { Profile } from './types.ts'

// Who is signed in (docs/accounts.md#sessions): undefined while the app asks, null when
// nobody is. The session itself is the HttpOnly cookie; the app never sees its token.

export const me = signal<Profile | null | undefined>(undefined)

/**
 * Why the app could not ask who is signed in (the server down, restarting behind its proxy,
 * or this device offline: '' when there was no answer at all), or null. Not knowing is not being signed out: the app says the
 * server cannot be reached and offers to try again, rather than showing sign-in.
 */
export const unreachable = signal<string | null>(null)

export async function loadMe(): Promise<void> {
  try {
    const profile = await api<Profile>('GET', '/v1/user')
    // the account's language before its first screen, so nothing shows in another first
    await showStartingLanguage((profile as { locale?: string | null }).locale)
    me.value = profile
    unreachable.value = null
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      await showStartingLanguage()
      me.value = null
      unreachable.value = null
    } else if (error instanceof ApiError && (error.status === 0 || error.status >= 500))
      // no connection: nothing to add to what the screen says; a 5xx: the server's words
      unreachable.value = error.status === 0 ? '' : error.message
    else throw error
  }
}

export async function signOut(): Promise<void> {
  try {
    await api('POST', '/v1/auth/logout')
  } finally {
    // to the sign-in screen in the same step as signing out: the screen left behind must
    // not see a signed-out visitor and ask to come back to it after signing in
    batch(() => {
      navigate('/sign-in', { replace: true })
      me.value = null
    })
  }
}

whenSignedOut(() => {
  me.value = null
})
