import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import { useAuthSettings } from '../auth-settings.ts'
import { ConfirmButton } from '../components/confirm.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { LanguagePicker } from '../components/language-picker.tsx'
import { Rich } from '../components/rich.tsx'
import { SecurityEventList } from '../components/security-log.tsx'
import { When } from '../components/when.tsx'
import { t } from '../i18n.ts'
import { me } from '../session.ts'
import type {
  AuthSettings,
  ChangedProfile,
  Passkey,
  PasskeyRegistrationOptions,
  Profile,
  SessionView,
} from '../types.ts'
import { browserName } from '../user-agent.ts'
import { createPasskey, passkeysSupported, webauthnProblem } from '../webauthn.ts'
import { DeleteAccount } from './account-delete.tsx'

// Account (docs/app.md#account): profile, password, passkeys, signed-in browsers, your data
// and the security log (docs/accounts.md#users, #passkeys, #sessions, #export-your-data,
// docs/security.md#security-log).

export default function Account() {
  const profile = me.value
  const [sessions, setSessions] = useState<SessionView[] | null>(null)
  const [sessionsError, setSessionsError] = useState<unknown>(null)
  const loadSessions = () =>
    api<SessionView[]>('GET', '/v1/user/sessions').then((list) => {
      setSessions(list)
      setSessionsError(null)
    }, setSessionsError)
  useEffect(() => {
    loadSessions()
  }, [])
  if (!profile) return null
  return (
    <>
      <h1>{t('app.account.title')}</h1>
      <ProfileForm profile={profile} />
      <Language />
      <PasswordForm profile={profile} onChanged={loadSessions} />
      <Passkeys />
      <Sessions sessions={sessions} error={sessionsError} reload={loadSessions} />
      <section aria-labelledby="export-heading">
        <h2 id="export-heading">{t('app.account.export.title')}</h2>
        <p>{t('app.account.export.text')}</p>
        {/* a plain link: the browser signs it with the session cookie and saves the attachment */}
        <a class="button" href="/v1/user/export" download>
          {t('app.account.export.download')}
        </a>
      </section>
      <section aria-labelledby="security-log-heading">
        <h2 id="security-log-heading">{t('app.account.securityLog.title')}</h2>
        <p>{t('app.account.securityLog.text')}</p>
        <SecurityEventList
          path="/v1/user/security-events?limit=20"
          label={t('app.account.securityLog.label')}
          ownerId={profile.id}
        />
      </section>
      <DeleteAccount profile={profile} />
    </>
  )
}

/** What the e-mail field says of the address: a mailed link only when this service sends mail. */
function emailHint(
  profile: Profile,
  settings: AuthSettings | null | undefined,
): string | undefined {
  if (!profile.email || !settings) return undefined
  if (!settings.email) return t('app.account.profile.noMail')
  return profile.emailVerified ? undefined : t('app.account.profile.unconfirmed')
}

/**
 * The app's language (docs/languages.md): kept on this device, and on the account, so that
 * its e-mails and notifications come in it too (`PATCH /v1/user {locale}`).
 */
function Language() {
  const [error, setError] = useState<unknown>(null)
  return (
    <section aria-labelledby="language-heading">
      <h2 id="language-heading">{t('app.account.language.title')}</h2>
      <p class="hint">{t('app.account.language.hint')}</p>
      <LanguagePicker
        onChosen={async (code) => {
          setError(null)
          try {
            const changed = await api<ChangedProfile>('PATCH', '/v1/user', {
              body: { locale: code },
            })
            const { pendingEmail: _, ...rest } = changed
            me.value = rest
          } catch (e) {
            setError(e)
          }
        }}
      />
      <FormError error={error} />
    </section>
  )
}

function ProfileForm(props: { profile: Profile }) {
  const { profile } = props
  const settings = useAuthSettings()
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')
  return (
    <section aria-labelledby="profile-heading">
      <h2 id="profile-heading">{t('app.account.profile.title')}</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const data = new FormData(event.currentTarget)
          const name = String(data.get('name') ?? '')
          const email = String(data.get('email') ?? '')
          // only what changed: an unchanged address is not mailed again
          const body = {
            ...(name !== profile.name && { name }),
            ...(email !== (profile.email ?? '') && { email }),
          }
          if (Object.keys(body).length === 0) {
            setNotice(t('app.account.profile.unchanged'))
            return
          }
          setBusy(true)
          setError(null)
          setNotice('')
          try {
            const changed = await api<ChangedProfile>('PATCH', '/v1/user', { body })
            const { pendingEmail, ...rest } = changed
            me.value = rest
            setNotice(
              pendingEmail
                ? t('app.account.profile.savedPending', { email: pendingEmail })
                : t('app.account.profile.saved'),
            )
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <Field
          label={t('app.account.profile.name')}
          name="name"
          defaultValue={profile.name}
          required
          maxLength={60}
          autocomplete="name"
          hint={t('app.account.profile.nameHint')}
          error={fieldError(error, 'name')}
        />
        <Field
          label={t('app.account.profile.email')}
          name="email"
          type="email"
          defaultValue={profile.email ?? ''}
          autocomplete="email"
          hint={emailHint(profile, settings)}
          error={fieldError(error, 'email')}
        />
        <FormError error={error} />
        <p class="notice" aria-live="polite">
          {notice}
        </p>
        <button type="submit" class="button primary" disabled={busy}>
          {t('app.account.profile.save')}
        </button>
      </form>
    </section>
  )
}

function PasswordForm(props: { profile: Profile; onChanged: () => void }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')
  const hasPassword = props.profile.hasPassword
  return (
    <section aria-labelledby="password-heading">
      <h2 id="password-heading">{t('app.account.password.title')}</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const form = event.currentTarget
          const data = new FormData(form)
          setBusy(true)
          setError(null)
          setNotice('')
          try {
            const changed = await api<ChangedProfile>('PATCH', '/v1/user', {
              body: {
                password: String(data.get('password') ?? ''),
                ...(hasPassword && { currentPassword: String(data.get('currentPassword') ?? '') }),
              },
            })
            const { pendingEmail: _, ...rest } = changed
            me.value = rest
            form.reset()
            setNotice(t('app.account.password.changed'))
            props.onChanged()
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        {hasPassword && (
          <Field
            label={t('app.account.password.current')}
            name="currentPassword"
            type="password"
            autocomplete="current-password"
            required
            error={fieldError(error, 'currentPassword')}
          />
        )}
        <Field
          label={t('app.account.password.new')}
          name="password"
          type="password"
          autocomplete="new-password"
          required
          hint={t('app.account.password.hint')}
          error={fieldError(error, 'password')}
        />
        <FormError error={error} />
        <p class="notice" aria-live="polite">
          {notice}
        </p>
        <button type="submit" class="button primary" disabled={busy}>
          {hasPassword ? t('app.account.password.change') : t('app.account.password.set')}
        </button>
      </form>
    </section>
  )
}

function Passkeys() {
  const [passkeys, setPasskeys] = useState<Passkey[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')
  const load = () =>
    api<Passkey[]>('GET', '/v1/user/passkeys').then((list) => {
      setPasskeys(list)
    }, setError)
  useEffect(() => {
    load()
  }, [])
  const supported = passkeysSupported()
  return (
    <section aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading">{t('app.account.passkeys.title')}</h2>
      <p>{t('app.account.passkeys.text')}</p>
      {passkeys && passkeys.length === 0 && <p>{t('app.account.passkeys.none')}</p>}
      {passkeys && passkeys.length > 0 && (
        <ul class="item-list">
          {passkeys.map((p) => (
            <PasskeyItem
              key={p.id}
              passkey={p}
              onChanged={(text) => {
                setNotice(text)
                load()
              }}
            />
          ))}
        </ul>
      )}
      {!supported && <p class="hint">{t('app.account.passkeys.unsupported')}</p>}
      {supported && (
        <form
          class="inline-form"
          onSubmit={async (event) => {
            event.preventDefault()
            const form = event.currentTarget
            const name = String(new FormData(form).get('name') ?? '')
            setBusy(true)
            setError(null)
            setNotice('')
            try {
              const options = await api<PasskeyRegistrationOptions>(
                'POST',
                '/v1/user/passkeys/registration-options',
              )
              let response: Awaited<ReturnType<typeof createPasskey>>
              try {
                response = await createPasskey(options)
              } catch (e) {
                throw new Error(webauthnProblem(e))
              }
              const made = await api<Passkey>('POST', '/v1/user/passkeys', {
                body: { ...(name && { name }), response },
              })
              form.reset()
              setNotice(t('app.account.passkeys.added', { name: made.name }))
              await load()
            } catch (e) {
              setError(e)
            } finally {
              setBusy(false)
            }
          }}
        >
          <Field
            label={t('app.account.passkeys.newName')}
            name="name"
            maxLength={60}
            hint={t('app.account.passkeys.newNameHint')}
            error={fieldError(error, 'name')}
          />
          <button type="submit" class="button primary" disabled={busy}>
            {t('app.account.passkeys.add')}
          </button>
        </form>
      )}
      <FormError error={error} />
      <p class="notice" aria-live="polite">
        {notice}
      </p>
    </section>
  )
}

function PasskeyItem(props: { passkey: Passkey; onChanged: (notice: string) => void }) {
  const { passkey } = props
  const [renaming, setRenaming] = useState(false)
  const [error, setError] = useState<unknown>(null)
  return (
    <li class="item">
      {renaming ? (
        <form
          class="inline-form"
          onSubmit={async (event) => {
            event.preventDefault()
            const name = String(new FormData(event.currentTarget).get('name') ?? '')
            setError(null)
            try {
              await api('PATCH', apiPath`/v1/user/passkeys/${passkey.id}`, { body: { name } })
              setRenaming(false)
              props.onChanged(t('app.account.passkeys.renamed', { name }))
            } catch (e) {
              setError(e)
            }
          }}
        >
          <Field
            label={t('app.account.passkeys.renameLabel', { name: passkey.name })}
            name="name"
            defaultValue={passkey.name}
            required
            maxLength={60}
            error={fieldError(error, 'name')}
          />
          <FormError error={error} />
          <div class="actions">
            <button type="submit" class="button primary">
              {t('app.account.passkeys.saveName')}
            </button>
            <button type="button" class="button" onClick={() => setRenaming(false)}>
              {t('app.account.passkeys.cancel')}
            </button>
          </div>
        </form>
      ) : (
        <>
          <strong>{passkey.name}</strong>
          <span class="muted">
            {' '}
            <Rich
              text={t('app.account.passkeys.facts')}
              parts={{
                added: () => <When iso={passkey.createdAt} />,
                used: () => (
                  <When iso={passkey.lastUsedAt} never={t('app.account.passkeys.never')} />
                ),
              }}
            />
          </span>
          <div class="actions">
            <button
              type="button"
              class="button"
              aria-label={t('app.account.passkeys.renameAria', { name: passkey.name })}
              onClick={() => setRenaming(true)}
            >
              {t('app.account.passkeys.rename')}
            </button>
            <ConfirmButton
              label={t('app.account.passkeys.delete')}
              ariaLabel={t('app.account.passkeys.deleteAria', { name: passkey.name })}
              title={t('app.account.passkeys.deleteTitle', { name: passkey.name })}
              confirmLabel={t('app.account.passkeys.deleteConfirm')}
              onConfirm={async () => {
                await api('DELETE', apiPath`/v1/user/passkeys/${passkey.id}`)
                props.onChanged(t('app.account.passkeys.deleted', { name: passkey.name }))
              }}
            >
              <p>{t('app.account.passkeys.deleteText')}</p>
            </ConfirmButton>
          </div>
        </>
      )}
    </li>
  )
}

const METHOD_TEXT: Record<string, () => string> = {
  password: () => t('app.account.sessions.method.password'),
  signup: () => t('app.account.sessions.method.signup'),
  passkey: () => t('app.account.sessions.method.passkey'),
  link: () => t('app.account.sessions.method.link'),
  setup: () => t('app.account.sessions.method.setup'),
}

function Sessions(props: {
  sessions: SessionView[] | null
  error: unknown
  reload: () => Promise<void>
}) {
  const [notice, setNotice] = useState('')
  const others = (props.sessions ?? []).filter((s) => !s.current)
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">{t('app.account.sessions.title')}</h2>
      <FormError error={props.error} />
      {props.sessions && (
        <ul class="item-list">
          {props.sessions.map((s) => (
            <li key={s.id} class={`item${s.current ? ' current' : ''}`}>
              <strong>
                {s.userAgent ? browserName(s.userAgent) : t('app.account.sessions.unknownBrowser')}
              </strong>
              {s.current && <span class="badge">{t('app.account.sessions.thisBrowser')}</span>}
              <div class="muted">
                <Rich
                  text={t(s.ip ? 'app.account.sessions.factsFrom' : 'app.account.sessions.facts', {
                    method: METHOD_TEXT[s.method]?.() ?? s.method,
                    ip: s.ip,
                  })}
                  parts={{
                    at: () => <When iso={s.createdAt} />,
                    used: () => <When iso={s.lastSeenAt} />,
                  }}
                />
              </div>
              {!s.current && (
                <div class="actions">
                  <ConfirmButton
                    label={t('app.account.sessions.signOut')}
                    ariaLabel={t('app.account.sessions.signOutAria', {
                      browser: s.userAgent
                        ? browserName(s.userAgent)
                        : t('app.account.sessions.theBrowser'),
                      at: s.lastSeenAt,
                    })}
                    title={t('app.account.sessions.signOutTitle')}
                    confirmLabel={t('app.account.sessions.signOutConfirm')}
                    onConfirm={async () => {
                      await api('DELETE', apiPath`/v1/user/sessions/${s.id}`)
                      setNotice(t('app.account.sessions.signedOut'))
                      await props.reload()
                    }}
                  >
                    <p>{t('app.account.sessions.signOutText')}</p>
                  </ConfirmButton>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      <ConfirmButton
        label={t('app.account.sessions.signOutOthers')}
        title={t('app.account.sessions.signOutOthersTitle')}
        confirmLabel={t('app.account.sessions.signOutOthersConfirm')}
        disabled={others.length === 0}
        onConfirm={async () => {
          await api('DELETE', '/v1/user/sessions')
          setNotice(t('app.account.sessions.othersSignedOut'))
          await props.reload()
        }}
      >
        <p>{t('app.account.sessions.signOutOthersText')}</p>
      </ConfirmButton>
      <p class="notice" aria-live="polite">
        {notice}
      </p>
    </section>
  )
}
