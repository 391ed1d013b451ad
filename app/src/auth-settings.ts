import { signal } from '@preact/signals'
import { api } from './api.ts'
import type { AuthSettings } from './types.ts'

// How people join this service (`GET /v1/auth/settings`, docs/api.md#sign-up-sign-in-and-sessions):
// whether anyone may sign up, and whether it sends mail. Asked once, by the first screen that
// needs it, so the sign-up screen can say "by invitation" before anyone types, and the account
// screen mentions a mailed link only when mail is sent. undefined while asked; null when the
// server does not say (then screens fall back to the server's answers to what a person does).

export const authSettings = signal<AuthSettings | null | undefined>(undefined)

let asked = false

/** The settings, asked for on first use. */
export function useAuthSettings(): AuthSettings | null | undefined {
  if (!asked) {
    asked = true
    api<AuthSettings>('GET', '/v1/auth/settings').then(
      (settings) => {
        authSettings.value = settings
      },
      () => {
        authSettings.value = null
        // a later screen asks again
        asked = false
      },
    )
  }
  return authSettings.value
}
