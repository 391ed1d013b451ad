import { useEffect, useState } from 'preact/hooks'
import type { SecurityEventKind } from '../../../src/modules/audit/kinds.ts'
import { apiPage } from '../api.ts'
import { t } from '../i18n.ts'
import type { AuditEvent, SecurityEvent } from '../types.ts'
import { browserName } from '../user-agent.ts'
import { FormError } from './form.tsx'
import { When } from './when.tsx'

// The security log in words (docs/app.md#security-log): the Account screen's own events and
// the operators' audit screen share it.

// Each detail a text names, as the key of its words (keys are literal: docs/languages.md).
const METHOD: Record<string, string> = {
  password: 'app.securityLog.methods.password',
  signup: 'app.securityLog.methods.signup',
  passkey: 'app.securityLog.methods.passkey',
  link: 'app.securityLog.methods.link',
  verify: 'app.securityLog.methods.verify',
  reset: 'app.securityLog.methods.reset',
  setup: 'app.securityLog.methods.setup',
}

const REASON: Record<string, string> = {
  wrongPassword: 'app.securityLog.reasons.wrongPassword',
  unknownAddress: 'app.securityLog.reasons.unknownAddress',
  noPassword: 'app.securityLog.reasons.noPassword',
  notVerified: 'app.securityLog.reasons.notVerified',
  wrongCurrentPassword: 'app.securityLog.reasons.wrongCurrentPassword',
  wrongPasswordToDelete: 'app.securityLog.reasons.wrongPasswordToDelete',
}

const ROLE: Record<string, string> = {
  owner: 'app.securityLog.roles.owner',
  updater: 'app.securityLog.roles.updater',
  subscriber: 'app.securityLog.roles.subscriber',
}

/** A role's name in the language shown (one the app does not know, as recorded). */
const roleName = (role: string | null): string => {
  const known = role === null ? undefined : ROLE[role]
  return known ? t(known) : (role ?? '')
}

/** Each kind's name, for a list to pick from (every kind the server records: type-checked). */
const KIND_KEYS: Record<SecurityEventKind, string> = {
  signIn: 'app.securityLog.kinds.signIn',
  signInFailed: 'app.securityLog.kinds.signInFailed',
  signOut: 'app.securityLog.kinds.signOut',
  sessionRevoked: 'app.securityLog.kinds.sessionRevoked',
  passwordChanged: 'app.securityLog.kinds.passwordChanged',
  passwordReset: 'app.securityLog.kinds.passwordReset',
  emailChanged: 'app.securityLog.kinds.emailChanged',
  emailVerified: 'app.securityLog.kinds.emailVerified',
  keyCreated: 'app.securityLog.kinds.keyCreated',
  keyRotated: 'app.securityLog.kinds.keyRotated',
  keyRevoked: 'app.securityLog.kinds.keyRevoked',
  keysRevokedAll: 'app.securityLog.kinds.keysRevokedAll',
  passkeyAdded: 'app.securityLog.kinds.passkeyAdded',
  passkeyRemoved: 'app.securityLog.kinds.passkeyRemoved',
  roleGranted: 'app.securityLog.kinds.roleGranted',
  roleChanged: 'app.securityLog.kinds.roleChanged',
  roleRemoved: 'app.securityLog.kinds.roleRemoved',
  roleAccepted: 'app.securityLog.kinds.roleAccepted',
  statusTransferOffered: 'app.securityLog.kinds.statusTransferOffered',
  statusTransferred: 'app.securityLog.kinds.statusTransferred',
  adminGranted: 'app.securityLog.kinds.adminGranted',
  adminRevoked: 'app.securityLog.kinds.adminRevoked',
  accountDeleted: 'app.securityLog.kinds.accountDeleted',
}

/** Every kind with its name in the language shown, in the order the server lists them. */
export const kindNames = (): [SecurityEventKind, string][] =>
  (Object.keys(KIND_KEYS) as SecurityEventKind[]).map((kind) => [kind, t(KIND_KEYS[kind])])

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null)

/** What happened, in a sentence without its time, actor or place. */
export function describeEvent(event: SecurityEvent): string {
  const d = event.detail ?? {}
  const label = text(d.label)
  const key =
    label === null
      ? t('app.securityLog.events.anyKey')
      : t('app.securityLog.events.namedKey', { label })
  const count = typeof d.count === 'number' ? d.count : null
  switch (event.kind) {
    case 'signIn': {
      const method = text(d.method) ?? ''
      const how = METHOD[method]
      return how
        ? t('app.securityLog.events.signIn', { how: t(how) })
        : t('app.securityLog.events.signInOther', {
            method: method || t('app.securityLog.events.unknownMethod'),
          })
    }
    case 'signInFailed': {
      const why = REASON[text(d.reason) ?? '']
      return t('app.securityLog.events.signInFailed', {
        reason: why ? t(why) : t('app.securityLog.events.refused'),
      })
    }
    case 'signOut':
      return t('app.securityLog.events.signOut')
    case 'sessionRevoked':
      return count === null
        ? t('app.securityLog.events.sessionRevoked')
        : t('app.securityLog.events.sessionsRevoked', { count })
    case 'passwordChanged':
      return t('app.securityLog.events.passwordChanged')
    case 'passwordReset':
      return t('app.securityLog.events.passwordReset')
    case 'emailChanged': {
      const email = text(d.email)
      return email === null
        ? t('app.securityLog.events.emailChangedNew')
        : t('app.securityLog.events.emailChanged', { email })
    }
    case 'emailVerified':
      return t('app.securityLog.events.emailVerified', { email: text(d.email) ?? '' })
    case 'keyCreated':
      return t('app.securityLog.events.keyCreated', { key })
    case 'keyRotated':
      return t('app.securityLog.events.keyRotated', { key })
    case 'keyRevoked':
      return t('app.securityLog.events.keyRevoked', { key })
    case 'keysRevokedAll':
      return count === null
        ? t('app.securityLog.events.keysRevokedSome')
        : t('app.securityLog.events.keysRevokedAll', { count })
    case 'passkeyAdded':
      return t('app.securityLog.events.passkeyAdded', { name: text(d.name) ?? '' })
    case 'passkeyRemoved':
      return t('app.securityLog.events.passkeyRemoved')
    case 'roleGranted':
      return t('app.securityLog.events.roleGranted', { role: roleName(text(d.role)) })
    case 'roleChanged':
      return t('app.securityLog.events.roleChanged', { role: roleName(text(d.role)) })
    case 'roleRemoved':
      return d.left === true
        ? t('app.securityLog.events.roleLeft')
        : t('app.securityLog.events.roleRemoved')
    case 'roleAccepted':
      return t('app.securityLog.events.roleAccepted', { role: roleName(text(d.role)) })
    case 'statusTransferOffered':
      return t('app.securityLog.events.statusTransferOffered')
    case 'statusTransferred':
      return d.keyKept === false
        ? t('app.securityLog.events.statusTransferredNoKey')
        : t('app.securityLog.events.statusTransferred')
    case 'adminGranted':
      return t('app.securityLog.kinds.adminGranted')
    case 'adminRevoked':
      return t('app.securityLog.kinds.adminRevoked')
    case 'accountDeleted':
      return typeof d.statuses === 'number'
        ? t('app.securityLog.events.accountDeletedWithStatuses', { count: d.statuses })
        : t('app.securityLog.events.accountDeleted')
    default:
      return event.kind
  }
}

/** Who did it and from where, as a reader of the account concerned sees it. */
function origin(event: SecurityEvent, ownerId: string | null): string {
  const by =
    event.actor === null || event.actor.id === ownerId
      ? ''
      : ` ${t('app.securityLog.by', { name: event.actor.name ?? t('app.securityLog.deletedAccount') })}`
  const from = event.ip === null ? '' : ` ${t('app.securityLog.from', { ip: event.ip })}`
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
      {events && events.length === 0 && <p>{t('app.securityLog.empty')}</p>}
      {events && events.length > 0 && (
        <ol class="item-list security-log" aria-label={props.label}>
          {events.map((event) => (
            <li key={event.id} class="item">
              <strong>{describeEvent(event)}</strong>
              {props.showUser && (
                <span class="muted">
                  {' '}
                  ·{' '}
                  {event.user === null
                    ? t('app.securityLog.noAccount')
                    : (event.user.name ?? event.user.id)}
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
          {t('app.securityLog.older')}
        </button>
      )}
    </>
  )
}
