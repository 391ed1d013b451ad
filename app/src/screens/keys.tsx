import { useEffect, useState } from 'preact/hooks'
import { SCOPES } from '../../../src/modules/keys/scopes.ts'
import { api, apiPath } from '../api.ts'
import { ConfirmButton } from '../components/confirm.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { Rich } from '../components/rich.tsx'
import { SecretOnce } from '../components/secret.tsx'
import { When } from '../components/when.tsx'
import { t } from '../i18n.ts'
import { loadMyStatuses, type MyStatus } from '../my-statuses.ts'
import { me } from '../session.ts'
import type { ApiKey, NewApiKey, RotatedApiKey, Scope } from '../types.ts'

// API keys (docs/app.md#api-keys): my keys, a new one with scopes and statuses it is
// confined to, its secret shown once; rotate, revoke, revoke all (docs/accounts.md#scoped-keys).

/** What each scope lets a key do, in the words of docs/accounts.md#scoped-keys. */
const SCOPE_TEXT: Record<Scope, () => string> = {
  'status:read': () => t('app.keys.scope.statusRead'),
  'status:value': () => t('app.keys.scope.statusValue'),
  'status:write': () => t('app.keys.scope.statusWrite'),
  'status:manage': () => t('app.keys.scope.statusManage'),
  keys: () => t('app.keys.scope.keys'),
  account: () => t('app.keys.scope.account'),
  admin: () => t('app.keys.scope.admin'),
}

/** A new key's scopes unless the person changes them: `status:*`, as the API's default. */
const DEFAULT_SCOPES: Scope[] = ['status:read', 'status:value', 'status:write', 'status:manage']

/** Grace periods offered when rotating, in seconds (the API allows up to a day). */
const GRACE = [
  { seconds: 0, label: () => t('app.keys.rotate.graceNone') },
  { seconds: 3600, label: () => t('app.keys.rotate.graceHour') },
  { seconds: 86_400, label: () => t('app.keys.rotate.graceDay') },
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
      <h1>{t('app.keys.title')}</h1>
      <p>{t('app.keys.intro')}</p>
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
            <Rich
              text={t('app.keys.secretText')}
              parts={{
                label: () => <strong>{secret.label}</strong>,
                header: () => <code>service-api-key</code>,
              }}
            />
          </p>
        </SecretOnce>
      )}
      <p class="notice" aria-live="polite">
        {notice}
      </p>

      <CreateKey
        statuses={statuses}
        onCreated={(key) => {
          setSecret({
            title: t('app.keys.newKeyTitle'),
            key: key.key,
            label: key.label ?? key.prefix,
          })
          load()
        }}
      />

      <h2>{t('app.keys.yours')}</h2>
      <FormError error={error} />
      {keys === null && !error && <p class="loading">{t('app.keys.loading')}</p>}
      {keys && keys.length === 0 && <p>{t('app.keys.none')}</p>}
      {keys && keys.length > 0 && (
        <ul class="key-list">
          {keys.map((key) => {
            const state = stateOf(key, now)
            const name = key.label ?? t('app.keys.unlabelled')
            return (
              <li key={key.id} class={`key-item key-${state}`}>
                <div class="key-head">
                  <strong class="key-label">{name}</strong> <code>{key.prefix}…</code>{' '}
                  <span class="badge">{STATE_TEXT[state]()}</span>
                </div>
                <dl class="facts">
                  <dt>{t('app.keys.facts.scopes')}</dt>
                  <dd>{key.scopes.length ? key.scopes.join(', ') : t('app.keys.facts.none')}</dd>
                  <dt>{t('app.keys.facts.statuses')}</dt>
                  <dd>
                    {key.statusIds === null
                      ? t('app.keys.facts.everyStatus')
                      : key.statusIds.map(nameOf).join(', ') || t('app.keys.facts.none')}
                  </dd>
                  <dt>{t('app.keys.facts.created')}</dt>
                  <dd>
                    <When iso={key.createdAt} />
                  </dd>
                  <dt>
                    {state === 'grace'
                      ? t('app.keys.facts.worksUntil')
                      : t('app.keys.facts.expires')}
                  </dt>
                  <dd>
                    <When iso={key.expiresAt} never={t('app.keys.facts.never')} />
                  </dd>
                  {key.revokedAt && state === 'revoked' && (
                    <>
                      <dt>{t('app.keys.facts.revoked')}</dt>
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
                          title: t('app.keys.rotatedTitle'),
                          key: rotated.key,
                          label: rotated.label ?? rotated.prefix,
                        })
                        load()
                      }}
                    />
                    <ConfirmButton
                      label={t('app.keys.revoke.label')}
                      ariaLabel={t('app.keys.revoke.aria', { name, prefix: key.prefix })}
                      title={t('app.keys.revoke.title', { name })}
                      confirmLabel={t('app.keys.revoke.confirm')}
                      onConfirm={async () => {
                        await api('DELETE', apiPath`/v1/user/api-keys/${key.id}`)
                        setNotice(t('app.keys.revoke.done', { name }))
                        await load()
                      }}
                    >
                      <p>
                        <Rich
                          text={t('app.keys.revoke.text')}
                          parts={{ prefix: () => <code>{key.prefix}…</code> }}
                        />
                      </p>
                    </ConfirmButton>
                  </div>
                )}
              </li>
            )
          })}
        </ul>
      )}

      <h2>{t('app.keys.revokeAll.heading')}</h2>
      <p>{t('app.keys.revokeAll.intro')}</p>
      <RevokeAll
        working={working}
        onDone={(revoked) => {
          setNotice(t('app.keys.revokeAll.done', { count: revoked }))
          load()
        }}
      />
    </>
  )
}

const RELATION_TEXT = {
  shared: () => t('app.keys.relation.shared'),
  followed: () => t('app.keys.relation.followed'),
} as const

const STATE_TEXT: Record<State, () => string> = {
  working: () => t('app.keys.state.working'),
  revoked: () => t('app.keys.state.revoked'),
  expired: () => t('app.keys.state.expired'),
  grace: () => t('app.keys.state.grace'),
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
      <summary>{t('app.keys.create.title')}</summary>
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
          label={t('app.keys.create.label')}
          name="label"
          hint={t('app.keys.create.labelHint')}
          maxLength={100}
          error={fieldError(error, 'label')}
        />
        <fieldset>
          <legend>{t('app.keys.create.scopes')}</legend>
          {/* only an operator's key may hold admin (docs/operations.md#operators) */}
          {SCOPES.filter((scope) => scope !== 'admin' || me.value?.admin).map((scope) => (
            <label key={scope} class="check">
              <input
                type="checkbox"
                name="scopes"
                value={scope}
                checked={scopes.includes(scope)}
                onChange={(event) => setScopes(toggle(scopes, scope, event.currentTarget.checked))}
              />
              <span>
                <code>{scope}</code>: {SCOPE_TEXT[scope]()}
              </span>
            </label>
          ))}
          {fieldError(error, 'scopes') && <p class="field-error">{fieldError(error, 'scopes')}</p>}
        </fieldset>
        <fieldset>
          <legend>{t('app.keys.create.statuses')}</legend>
          <label class="check">
            <input
              type="radio"
              name="confinement"
              checked={!confined}
              onChange={() => setConfined(false)}
            />
            <span>{t('app.keys.create.every')}</span>
          </label>
          <label class="check">
            <input
              type="radio"
              name="confinement"
              checked={confined}
              onChange={() => setConfined(true)}
            />
            <span>{t('app.keys.create.only')}</span>
          </label>
          {confined && (
            <div class="status-picks">
              {props.statuses.length === 0 && <p class="hint">{t('app.keys.create.noStatuses')}</p>}
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
                      <span class="muted"> ({RELATION_TEXT[s.relation]()})</span>
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
          label={t('app.keys.create.expires')}
          name="expires"
          type="date"
          hint={t('app.keys.create.expiresHint')}
          error={fieldError(error, 'expiresAt')}
        />
        <FormError error={error} />
        <button type="submit" class="button primary" disabled={busy}>
          {t('app.keys.create.submit')}
        </button>
      </form>
    </details>
  )
}

function RotateKey(props: { apiKey: ApiKey; onRotated: (key: RotatedApiKey) => void }) {
  const [grace, setGrace] = useState(0)
  const name = props.apiKey.label ?? t('app.keys.unlabelled')
  return (
    <ConfirmButton
      label={t('app.keys.rotate.label')}
      ariaLabel={t('app.keys.rotate.aria', { name, prefix: props.apiKey.prefix })}
      buttonClass=""
      title={t('app.keys.rotate.title', { name })}
      confirmLabel={t('app.keys.rotate.confirm')}
      onConfirm={async () => {
        const rotated = await api<RotatedApiKey>(
          'POST',
          apiPath`/v1/user/api-keys/${props.apiKey.id}/rotate`,
          { body: grace ? { graceSeconds: grace } : {} },
        )
        props.onRotated(rotated)
      }}
    >
      <p>{t('app.keys.rotate.text')}</p>
      <div class="field">
        <label for={`grace-${props.apiKey.id}`}>{t('app.keys.rotate.grace')}</label>
        <select
          id={`grace-${props.apiKey.id}`}
          value={String(grace)}
          onChange={(event) => setGrace(Number(event.currentTarget.value))}
        >
          {GRACE.map((g) => (
            <option key={g.seconds} value={String(g.seconds)}>
              {g.label()}
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
      label={t('app.keys.revokeAll.label')}
      title={t('app.keys.revokeAll.title')}
      confirmLabel={t('app.keys.revokeAll.confirm')}
      disabled={props.working.length === 0}
      onConfirm={async () => {
        const { revoked } = await api<{ revoked: number }>('POST', '/v1/user/api-keys/revoke-all', {
          body: keep ? { keep } : {},
        })
        setKeep('')
        props.onDone(revoked)
      }}
    >
      <p>{t('app.keys.revokeAll.text')}</p>
      <div class="field">
        <label for="revoke-all-keep">{t('app.keys.revokeAll.keep')}</label>
        <select
          id="revoke-all-keep"
          value={keep}
          onChange={(event) => setKeep(event.currentTarget.value)}
        >
          <option value="">{t('app.keys.revokeAll.keepNone')}</option>
          {props.working.map((k) => (
            <option key={k.id} value={k.id}>
              {k.label ?? t('app.keys.unlabelled')} ({k.prefix}…)
            </option>
          ))}
        </select>
      </div>
    </ConfirmButton>
  )
}
