import { useEffect, useState } from 'preact/hooks'
import { SCOPES } from '../../../src/modules/keys/scopes.ts'
import { api, apiPath } from '../api.ts'
import { ConfirmButton } from '../components/confirm.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { SecretOnce } from '../components/secret.tsx'
import { When } from '../components/when.tsx'
import { loadMyStatuses, type MyStatus } from '../my-statuses.ts'
import type { ApiKey, NewApiKey, RotatedApiKey, Scope } from '../types.ts'

// API keys (docs/app.md#api-keys): my keys, a new one with scopes and statuses it is
// confined to, its secret shown once; rotate, revoke, revoke all (docs/accounts.md#scoped-keys).

/** What each scope lets a key do, in the words of docs/accounts.md#scoped-keys. */
const SCOPE_TEXT: Record<Scope, string> = {
  'status:read': 'read statuses, their history and live updates',
  'status:value': 'set only the value, like an updater',
  'status:write': 'set any field, create statuses by key',
  'status:manage': 'delete, access settings, roles, invitations, share links',
  keys: 'manage API keys',
  account: 'profile, sessions, passkeys, notification channels',
  admin: 'administer this statusd (operators only)',
}

/** A new key's scopes unless the person changes them: `status:*`, as the API's default. */
const DEFAULT_SCOPES: Scope[] = ['status:read', 'status:value', 'status:write', 'status:manage']

/** Grace periods offered when rotating, in seconds (the API allows up to a day). */
const GRACE = [
  { seconds: 0, label: 'None: the old key stops now' },
  { seconds: 3600, label: 'One hour' },
  { seconds: 86_400, label: 'One day' },
]

type State = 'working' | 'revoked' | 'expired' | 'grace'

function stateOf(key: ApiKey, now: number): State {
  if (key.revokedAt && Date.parse(key.revokedAt) <= now) return 'revoked'
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return 'expired'
  if (key.replacedBy) return 'grace'
  return 'working'
}

export default function Keys() {
  const [keys, setKeys] = useState<ApiKey[] | null>(null)
  const [statuses, setStatuses] = useState<MyStatus[]>([])
  const [error, setError] = useState<unknown>(null)
  const [secret, setSecret] = useState<{ title: string; key: string; label: string } | null>(null)
  const [notice, setNotice] = useState('')

  const load = () =>
    api<ApiKey[]>('GET', '/v1/user/api-keys').then((list) => {
      setKeys(list)
      setError(null)
    }, setError)
  useEffect(() => {
    load()
    loadMyStatuses().then(setStatuses, () => setStatuses([]))
  }, [])

  const now = Date.now()
  const nameOf = (id: string) => statuses.find((s) => s.statusId === id)?.name ?? id
  const working = (keys ?? []).filter((k) => stateOf(k, now) === 'working')

  return (
    <>
      <h1>API keys</h1>
      <p>
        A key lets a script or a device use statusd as you. Give each one only what it needs: its
        scopes say what it may do, and confining it to some statuses hides every other one from it.
      </p>
      {secret && (
        <SecretOnce
          title={secret.title}
          secret={secret.key}
          onDone={() => {
            setSecret(null)
            setNotice('')
          }}
        >
          <p>
            Key <strong>{secret.label}</strong>. Send it in the <code>service-api-key</code> header.
          </p>
        </SecretOnce>
      )}
      <p class="notice" aria-live="polite">
        {notice}
      </p>

      <CreateKey
        statuses={statuses}
        onCreated={(key) => {
          setSecret({ title: 'Your new API key', key: key.key, label: key.label ?? key.prefix })
          load()
        }}
      />

      <h2>Your keys</h2>
      <FormError error={error} />
      {keys === null && !error && <p class="loading">Loading…</p>}
      {keys && keys.length === 0 && <p>No keys yet.</p>}
      {keys && keys.length > 0 && (
        <ul class="key-list">
          {keys.map((key) => {
            const state = stateOf(key, now)
            const name = key.label ?? 'Unlabelled key'
            return (
              <li key={key.id} class={`key-item key-${state}`}>
                <div class="key-head">
                  <strong class="key-label">{name}</strong> <code>{key.prefix}…</code>{' '}
                  <span class="badge">{STATE_TEXT[state]}</span>
                </div>
                <dl class="facts">
                  <dt>Scopes</dt>
                  <dd>{key.scopes.length ? key.scopes.join(', ') : 'none'}</dd>
                  <dt>Statuses</dt>
                  <dd>
                    {key.statusIds === null
                      ? 'every status you reach'
                      : key.statusIds.map(nameOf).join(', ') || 'none'}
                  </dd>
                  <dt>Created</dt>
                  <dd>
                    <When iso={key.createdAt} />
                  </dd>
                  <dt>{state === 'grace' ? 'Works until' : 'Expires'}</dt>
                  <dd>
                    <When iso={key.expiresAt} never="never" />
                  </dd>
                  {key.revokedAt && state === 'revoked' && (
                    <>
                      <dt>Revoked</dt>
                      <dd>
                        <When iso={key.revokedAt} />
                      </dd>
                    </>
                  )}
                </dl>
                {state === 'working' && (
                  <div class="actions">
                    <RotateKey
                      apiKey={key}
                      onRotated={(rotated) => {
                        setSecret({
                          title: 'The new key of the rotation',
                          key: rotated.key,
                          label: rotated.label ?? rotated.prefix,
                        })
                        load()
                      }}
                    />
                    <ConfirmButton
                      label="Revoke"
                      ariaLabel={`Revoke ${name} (${key.prefix})`}
                      title={`Revoke ${name}?`}
                      confirmLabel="Revoke the key"
                      onConfirm={async () => {
                        await api('DELETE', apiPath`/v1/user/api-keys/${key.id}`)
                        setNotice(`${name} was revoked: it stopped working.`)
                        await load()
                      }}
                    >
                      <p>
                        Whatever uses <code>{key.prefix}…</code> is refused from now on. This cannot
                        be undone.
                      </p>
                    </ConfirmButton>
                  </div>
                )}
              </li>
            )
          })}
        </ul>
      )}

      <h2>Lock every key out</h2>
      <p>
        If a key may have leaked, revoke them all in one step: keys made with a leaked key stop too.
        Keep one if a device must go on working, then make new keys.
      </p>
      <RevokeAll
        working={working}
        onDone={(revoked) => {
          setNotice(`${revoked} ${revoked === 1 ? 'key was' : 'keys were'} revoked.`)
          load()
        }}
      />
    </>
  )
}

const RELATION_TEXT = { shared: 'shared with me', followed: 'followed' } as const

const STATE_TEXT: Record<State, string> = {
  working: 'working',
  revoked: 'revoked',
  expired: 'expired',
  grace: 'replaced, still working',
}

function CreateKey(props: { statuses: MyStatus[]; onCreated: (key: NewApiKey) => void }) {
  const [scopes, setScopes] = useState<Scope[]>(DEFAULT_SCOPES)
  const [confined, setConfined] = useState(false)
  const [statusIds, setStatusIds] = useState<string[]>([])
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const toggle = <T,>(list: T[], item: T, on: boolean) =>
    on ? [...list.filter((x) => x !== item), item] : list.filter((x) => x !== item)

  return (
    <details class="panel">
      <summary>Create a key</summary>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const form = event.currentTarget
          const data = new FormData(form)
          const label = String(data.get('label') ?? '')
          const expires = String(data.get('expires') ?? '')
          setBusy(true)
          setError(null)
          try {
            const key = await api<NewApiKey>('POST', '/v1/user/api-keys', {
              body: {
                ...(label && { label }),
                // the end of the chosen day, in the person's own time zone
                ...(expires && { expiresAt: new Date(`${expires}T23:59:59`).toISOString() }),
                scopes,
                ...(confined && { statusIds }),
              },
            })
            form.reset()
            setScopes(DEFAULT_SCOPES)
            setConfined(false)
            setStatusIds([])
            props.onCreated(key)
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <Field
          label="Label"
          name="label"
          hint="A note to tell keys apart, such as “door sensor”."
          maxLength={100}
          error={fieldError(error, 'label')}
        />
        <fieldset>
          <legend>What it may do</legend>
          {SCOPES.map((scope) => (
            <label key={scope} class="check">
              <input
                type="checkbox"
                name="scopes"
                value={scope}
                checked={scopes.includes(scope)}
                onChange={(event) => setScopes(toggle(scopes, scope, event.currentTarget.checked))}
              />
              <span>
                <code>{scope}</code>: {SCOPE_TEXT[scope]}
              </span>
            </label>
          ))}
          {fieldError(error, 'scopes') && <p class="field-error">{fieldError(error, 'scopes')}</p>}
        </fieldset>
        <fieldset>
          <legend>Which statuses</legend>
          <label class="check">
            <input
              type="radio"
              name="confinement"
              checked={!confined}
              onChange={() => setConfined(false)}
            />
            <span>Every status I reach</span>
          </label>
          <label class="check">
            <input
              type="radio"
              name="confinement"
              checked={confined}
              onChange={() => setConfined(true)}
            />
            <span>Only these (a device key: others do not exist for it)</span>
          </label>
          {confined && (
            <div class="status-picks">
              {props.statuses.length === 0 && <p class="hint">You have no statuses yet.</p>}
              {props.statuses.map((s) => (
                <label key={s.statusId} class="check">
                  <input
                    type="checkbox"
                    name="statusIds"
                    value={s.statusId}
                    checked={statusIds.includes(s.statusId)}
                    onChange={(event) =>
                      setStatusIds(toggle(statusIds, s.statusId, event.currentTarget.checked))
                    }
                  />
                  <span>
                    {s.name}
                    {s.relation !== 'owned' && (
                      <span class="muted"> ({RELATION_TEXT[s.relation]})</span>
                    )}
                  </span>
                </label>
              ))}
            </div>
          )}
          {fieldError(error, 'statusIds') && (
            <p class="field-error">{fieldError(error, 'statusIds')}</p>
          )}
        </fieldset>
        <Field
          label="Expires"
          name="expires"
          type="date"
          hint="Leave empty for a key that never expires."
          error={fieldError(error, 'expiresAt')}
        />
        <FormError error={error} />
        <button type="submit" class="button primary" disabled={busy}>
          Create the key
        </button>
      </form>
    </details>
  )
}

function RotateKey(props: { apiKey: ApiKey; onRotated: (key: RotatedApiKey) => void }) {
  const [grace, setGrace] = useState(0)
  const name = props.apiKey.label ?? 'Unlabelled key'
  return (
    <ConfirmButton
      label="Rotate"
      ariaLabel={`Rotate ${name} (${props.apiKey.prefix})`}
      buttonClass=""
      title={`Rotate ${name}?`}
      confirmLabel="Rotate the key"
      onConfirm={async () => {
        const rotated = await api<RotatedApiKey>(
          'POST',
          apiPath`/v1/user/api-keys/${props.apiKey.id}/rotate`,
          { body: grace ? { graceSeconds: grace } : {} },
        )
        props.onRotated(rotated)
      }}
    >
      <p>
        A new key with the same label, scopes, statuses and expiry replaces it; its secret is shown
        once.
      </p>
      <div class="field">
        <label for={`grace-${props.apiKey.id}`}>The old key keeps working for</label>
        <select
          id={`grace-${props.apiKey.id}`}
          value={String(grace)}
          onChange={(event) => setGrace(Number(event.currentTarget.value))}
        >
          {GRACE.map((g) => (
            <option key={g.seconds} value={String(g.seconds)}>
              {g.label}
            </option>
          ))}
        </select>
      </div>
    </ConfirmButton>
  )
}

function RevokeAll(props: { working: ApiKey[]; onDone: (revoked: number) => void }) {
  const [keep, setKeep] = useState('')
  return (
    <ConfirmButton
      label="Revoke all keys"
      title="Revoke every key?"
      confirmLabel="Revoke them"
      disabled={props.working.length === 0}
      onConfirm={async () => {
        const { revoked } = await api<{ revoked: number }>('POST', '/v1/user/api-keys/revoke-all', {
          body: keep ? { keep } : {},
        })
        setKeep('')
        props.onDone(revoked)
      }}
    >
      <p>
        Every working key stops at once, and the live updates opened with them end. Your signed-in
        browsers are not affected.
      </p>
      <div class="field">
        <label for="revoke-all-keep">Keep one working</label>
        <select
          id="revoke-all-keep"
          value={keep}
          onChange={(event) => setKeep(event.currentTarget.value)}
        >
          <option value="">None: revoke every key</option>
          {props.working.map((k) => (
            <option key={k.id} value={k.id}>
              {k.label ?? 'Unlabelled key'} ({k.prefix}…)
            </option>
          ))}
        </select>
      </div>
    </ConfirmButton>
  )
}
