import { signal } from '@preact/signals'
import { ApiError, api, whenSignedOut } from './api.ts'
import type { Profile } from './types.ts'

// Who is signed in (docs/accounts.md#sessions): undefined while the app asks, null when
// nobody is. The session itself is the HttpOnly cookie; the app never sees its token.

export const me = signal<Profile | null | undefined>(undefined)

export async function loadMe(): Promise<void> {
  try {
    me.value = await api<Profile>('GET', '/v1/user')
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) me.value = null
    else throw error
  }
}

export async function signOut(): Promise<void> {
  try {
    await api('POST', '/v1/auth/logout')
  } finally {
    me.value = null
  }
}

whenSignedOut(() => {
  me.value = null
})
