import { useEffect, useState } from 'preact/hooks'
import type { SecurityEventKind } from '../../../src/modules/audit/kinds.ts'
import { apiPage } from '../api.ts'
import type { AuditEvent, SecurityEvent } from '../types.ts'
import { browserName } from '../user-agent.ts'
import { FormError } from './form.tsx'
import { When } from './when.tsx'

// The security log in words (docs/app.md#security-log): the Account screen's own events and
// the operators' audit screen share it.

const METHOD: Record<string, string> = {
  password: 'with the password',
  signup: 'by signing up',
  passkey: 'with a passkey',
  link: 'with a sign-in link',
  verify: 'by confirming the e-mail address',
  reset: 'by resetting the password',
  setup: 'by the setup link',
}

const REASON: Record<string, string> = {
  wrongPassword: 'a wrong password',
  unknownAddress: 'an address with no account',
  noPassword: 'a password, on an account without one',
  notVerified: 'a passkey whose answer did not verify',
  wrongCurrentPassword: 'a wrong current password, changing the password',
  wrongPasswordToDelete: 'a wrong password, deleting the account',
}

/** Each kind's name, for a list to pick from (every kind the server records: type-checked). */
export const KIND_NAMES: Record<SecurityEventKind, string> = {
  signIn: 'Sign-in',
  signInFailed: 'Failed sign-in',
  signOut: 'Sign-out',
  sessionRevoked: 'Browser signed out',
  passwordChanged: 'Password changed',
  passwordReset: 'Password reset',
  emailChanged: 'E-mail address changed',
  emailVerified: 'E-mail address confirmed',
  keyCreated: 'API key made',
  keyRotated: 'API key rotated',
  keyRevoked: 'API key revoked',
  keysRevokedAll: 'Every API key revoked',
  passkeyAdded: 'Passkey added',
  passkeyRemoved: 'Passkey deleted',
  roleGranted: 'Role offered',
  roleChanged: 'Role changed',
  roleRemoved: 'Role removed',
  roleAccepted: 'Role accepted',
  statusTransferOffered: 'Status offered to a new owner',
  statusTransferred: 'Status handed to a new owner',
  adminGranted: 'Made an operator',
  adminRevoked: 'No longer an operator',
  accountDeleted: 'Account deleted',
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null)

/** What happened, in a sentence without its time, actor or place. */
export function describeEvent(event: SecurityEvent): string {
  const d = event.detail ?? {}
  const label = text(d.label)
  const key = label === null ? 'an API key' : `the API key “${label}”`
  switch (event.kind) {
    case 'signIn':
      return `Signed in ${METHOD[text(d.method) ?? ''] ?? `(${text(d.method) ?? 'unknown method'})`}`
    case 'signInFailed':
      return `Failed sign-in: ${REASON[text(d.reason) ?? ''] ?? 'refused'}`
    case 'signOut':
      return 'Signed out'
    case 'sessionRevoked':
      return typeof d.count === 'number'
        ? `Signed out ${d.count} other browser${d.count === 1 ? '' : 's'}`
        : 'Signed a browser out'
    case 'passwordChanged':
      return 'Password changed'
    case 'passwordReset':
      return 'Password reset by a mailed link'
    case 'emailChanged':
      return `E-mail address changed to ${text(d.email) ?? 'a new one'}`
    case 'emailVerified':
      return `E-mail address ${text(d.email) ?? ''} confirmed`
    case 'keyCreated':
      return `Made ${key}`
    case 'keyRotated':
      return `Rotated ${key}`
    case 'keyRevoked':
      return `Revoked ${key}`
    case 'keysRevokedAll':
      return `Revoked every API key (${typeof d.count === 'number' ? d.count : 'some'})`
    case 'passkeyAdded':
      return `Added the passkey “${text(d.name) ?? ''}”`
    case 'passkeyRemoved':
      return 'Deleted a passkey'
    case 'roleGranted':
      return `Offered the role ${text(d.role) ?? ''} on a status`
    case 'roleChanged':
      return `Role on a status changed to ${text(d.role) ?? ''}`
    case 'roleRemoved':
      return d.left === true ? 'Left a status' : 'Role on a status removed'
    case 'roleAccepted':
      return `Accepted the role ${text(d.role) ?? ''} on a status`
    case 'statusTransferOffered':
      return 'A status offered to a new owner'
    case 'statusTransferred':
      return d.keyKept === false
        ? 'A status handed to a new owner, without its key (the new owner had one by that name)'
        : 'A status handed to a new owner'
    case 'adminGranted':
      return 'Made an operator'
    case 'adminRevoked':
      return 'No longer an operator'
    case 'accountDeleted':
      return `Deleted their account${typeof d.statuses === 'number' ? ` and ${d.statuses} status${d.statuses === 1 ? '' : 'es'}` : ''}`
    default:
      return event.kind
  }
}

/** Who did it and from where, as a reader of the account concerned sees it. */
function origin(event: SecurityEvent, ownerId: string | null): string {
  const by =
    event.actor === null
      ? ''
      : event.actor.id === ownerId
        ? ''
        : ` by ${event.actor.name ?? 'a deleted account'}`
  const from = event.ip === null ? '' : ` from ${event.ip}`
  const agent = event.userAgent === null ? '' : ` (${browserName(event.userAgent)})`
  return `${by}${from}${agent}`
}

/**
 * A paged list of events, newest first, from `path` (an API path with its query); `showUser`
 * names the account each concerns (the audit screen). `ownerId`: whose log it is, whose own
 * actions need no "by".
 */
export function SecurityEventList(props: {
  path: string
  label: string
  ownerId?: string | null
  showUser?: boolean
}) {
  const [events, setEvents] = useState<AuditEvent[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [loading, setLoading] = useState(false)
  useEffect(() => {
    let cancelled = false
    setEvents(null)
    setError(null)
    apiPage<AuditEvent>(props.path).then(
      (page) => {
        if (cancelled) return
        setEvents(page.items)
        setNext(page.next)
      },
      (err) => {
        if (!cancelled) setError(err)
      },
    )
    return () => {
      cancelled = true
    }
  }, [props.path])
  const more = async () => {
    if (!next) return
    setLoading(true)
    try {
      const page = await apiPage<AuditEvent>(next)
      setEvents((all) => [...(all ?? []), ...page.items])
      setNext(page.next)
    } catch (err) {
      setError(err)
    } finally {
      setLoading(false)
    }
  }
  return (
    <>
      <FormError error={error} />
      {events && events.length === 0 && <p>Nothing in the last 90 days.</p>}
      {events && events.length > 0 && (
        <ol class="item-list security-log" aria-label={props.label}>
          {events.map((event) => (
            <li key={event.id} class="item">
              <strong>{describeEvent(event)}</strong>
              {props.showUser && (
                <span class="muted">
                  {' '}
                  · {event.user === null ? 'no account' : (event.user.name ?? event.user.id)}
                </span>
              )}
              <div class="muted user-text">
                <When iso={event.at} />
                {origin(event, props.showUser ? (event.user?.id ?? null) : (props.ownerId ?? null))}
              </div>
            </li>
          ))}
        </ol>
      )}
      {next && (
        <button type="button" class="button" disabled={loading} onClick={more}>
          Older events
        </button>
      )}
    </>
  )
}
