import { api } from './api.ts'
import { t } from './i18n.ts'
import type { PasskeyRegistrationOptions } from './types.ts'

// WebAuthn between the API's JSON and the browser's bytes (docs/accounts.md#passkeys): the
// API speaks base64url, navigator.credentials speaks ArrayBuffers. Done by hand rather than
// with PublicKeyCredential.parseCreationOptionsFromJSON()/toJSON(), which not every browser
// the app supports has yet.

const toBytes = (base64url: string): Uint8Array<ArrayBuffer> => {
  const std = base64url.replace(/-/g, '+').replace(/_/g, '/')
  const binary = atob(std + '='.repeat((4 - (std.length % 4)) % 4))
  return Uint8Array.from(binary, (c) => c.charCodeAt(0))
}

const fromBytes = (buffer: ArrayBuffer): string => {
  let binary = ''
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** Whether this browser can make passkeys at all. */
export const passkeysSupported = (): boolean =>
  typeof window !== 'undefined' && 'PublicKeyCredential' in window && !!navigator.credentials

/**
 * Asks the browser (and the person's authenticator) for a new passkey; resolves with the
 * answer in the JSON form `POST /v1/user/passkeys` takes.
 */
export async function createPasskey(options: PasskeyRegistrationOptions) {
  const credential = (await navigator.credentials.create({
    publicKey: {
      ...options,
      challenge: toBytes(options.challenge),
      user: { ...options.user, id: toBytes(options.user.id) },
      excludeCredentials: options.excludeCredentials.map((c) => ({
        ...c,
        id: toBytes(c.id),
        transports: c.transports as AuthenticatorTransport[] | undefined,
      })),
    } as PublicKeyCredentialCreationOptions,
  })) as PublicKeyCredential | null
  if (!credential) throw new Error(t('app.webauthn.noneMade'))
  const response = credential.response as AuthenticatorAttestationResponse
  return {
    id: credential.id,
    rawId: fromBytes(credential.rawId),
    type: 'public-key' as const,
    ...(credential.authenticatorAttachment && {
      authenticatorAttachment: credential.authenticatorAttachment as 'platform' | 'cross-platform',
    }),
    clientExtensionResults: credential.getClientExtensionResults() as Record<string, unknown>,
    response: {
      clientDataJSON: fromBytes(response.clientDataJSON),
      attestationObject: fromBytes(response.attestationObject),
      transports: response.getTransports?.() ?? [],
    },
  }
}

/** A browser's refusal in plain words (the person cancelled, or the authenticator could not). */
export function webauthnProblem(error: unknown): string {
  const name = (error as Error)?.name
  if (name === 'NotAllowedError') return t('app.webauthn.cancelled')
  if (name === 'InvalidStateError') return t('app.webauthn.exists')
  return t('app.webauthn.failed', { message: (error as Error)?.message ?? String(error) })
}

interface RequestOptionsJson {
  challenge: string
  allowCredentials?: { id: string; type: 'public-key'; transports?: string[] }[]
  [key: string]: unknown
}

/** A passkey's answer to a fresh challenge, in the JSON form the API takes. */
export interface PasskeyAssertion {
  challengeId: string
  response: {
    id: string
    rawId: string
    type: string
    authenticatorAttachment?: string
    clientExtensionResults: AuthenticationExtensionsClientOutputs
    response: {
      clientDataJSON: string
      authenticatorData: string
      signature: string
      userHandle?: string
    }
  }
}

/**
 * A fresh challenge from the server answered by a passkey the device holds
 * (navigator.credentials.get()): what signing in and deleting the account post.
 */
export async function passkeyAssertion(): Promise<PasskeyAssertion> {
  const { challengeId, options } = await api<{ challengeId: string; options: RequestOptionsJson }>(
    'POST',
    '/v1/auth/passkey/options',
  )
  const credential = (await navigator.credentials.get({
    publicKey: {
      ...options,
      challenge: toBytes(options.challenge),
      allowCredentials: options.allowCredentials?.map((c) => ({
        ...c,
        id: toBytes(c.id),
        transports: c.transports as AuthenticatorTransport[] | undefined,
      })),
    } as PublicKeyCredentialRequestOptions,
  })) as PublicKeyCredential | null
  if (!credential) throw new Error(t('app.webauthn.noneChosen'))
  const response = credential.response as AuthenticatorAssertionResponse
  return {
    challengeId,
    response: {
      id: credential.id,
      rawId: fromBytes(credential.rawId),
      type: credential.type,
      ...(credential.authenticatorAttachment && {
        authenticatorAttachment: credential.authenticatorAttachment,
      }),
      clientExtensionResults: credential.getClientExtensionResults(),
      response: {
        clientDataJSON: fromBytes(response.clientDataJSON),
        authenticatorData: fromBytes(response.authenticatorData),
        signature: fromBytes(response.signature),
        ...(response.userHandle && { userHandle: fromBytes(response.userHandle) }),
      },
    },
  }
}

/**
 * Signs in with a passkey the device holds (docs/accounts.md#passkeys): the server's options,
 * navigator.credentials.get(), and the answer posted; resolves once the session cookie is set.
 */
export async function signInWithPasskey(): Promise<void> {
  await api('POST', '/v1/auth/passkey/login', { body: await passkeyAssertion() })
}
