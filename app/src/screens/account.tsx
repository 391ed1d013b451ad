import { useEffect, useState } from 'preact/hooks'
import { api, apiPath } from '../api.ts'
import { useAuthSettings } from '../auth-settings.ts'
import { ConfirmButton } from '../components/confirm.tsx'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { LanguagePicker } from '../components/language-picker.tsx'
import { SecurityEventList } from '../components/security-log.tsx'
import { When } from '../components/when.tsx'
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
      <h1>Account</h1>
      <ProfileForm profile={profile} />
      <LanguagePicker />
      <PasswordForm profile={profile} onChanged={loadSessions} />
      <Passkeys />
      <Sessions sessions={sessions} error={sessionsError} reload={loadSessions} />
      <section aria-labelledby="export-heading">
        <h2 id="export-heading">Your data</h2>
        <p>
          One JSON file with everything this service holds about you: your profile, the statuses you
          own with their whole history, your roles, invitations, share links, boards, channels,
          rules, schedules, and what your keys, sessions and passkeys are (never their secrets).
        </p>
        {/* a plain link: the browser signs it with the session cookie and saves the attachment */}
        <a class="button" href="/v1/user/export" download>
          Download your data
        </a>
      </section>
      <section aria-labelledby="security-log-heading">
        <h2 id="security-log-heading">Security log</h2>
        <p>
          Sign-ins, failed sign-ins and changes to your password, e-mail address, API keys, passkeys
          and roles, newest first, for 90 days. Something you do not recognise? Change your password
          and sign out everywhere else.
        </p>
        <SecurityEventList
          path="/v1/user/security-events?limit=20"
          label="Your security events, newest first"
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
  if (!settings.email) return 'This statusd sends no mail: nothing is sent to this address.'
  return profile.emailVerified ? undefined : 'Not confirmed yet: follow the link mailed to it.'
}

function ProfileForm(props: { profile: Profile }) {
  const { profile } = props
  const settings = useAuthSettings()
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [notice, setNotice] = useState('')
  return (
    <section aria-labelledby="profile-heading">
      <h2 id="profile-heading">Profile</h2>
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
            setNotice('Nothing to save: nothing was changed.')
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
                ? `Saved. A link was mailed to ${pendingEmail}: your address changes when you follow it.`
                : 'Saved.',
            )
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <Field
          label="Name"
          name="name"
          defaultValue={profile.name}
          required
          maxLength={60}
          autocomplete="name"
          hint="Shown to the people you share statuses with."
          error={fieldError(error, 'name')}
        />
        <Field
          label="E-mail"
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
          Save profile
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
      <h2 id="password-heading">Password</h2>
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
            setNotice(
              'Password changed. Every other browser signed in as you was signed out; this one stays signed in.',
            )
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
            label="Current password"
            name="currentPassword"
            type="password"
            autocomplete="current-password"
            required
            error={fieldError(error, 'currentPassword')}
          />
        )}
        <Field
          label="New password"
          name="password"
          type="password"
          autocomplete="new-password"
          required
          hint="12 to 256 characters, not a common password nor one easy to guess. A few unrelated words you will remember make a good one."
          error={fieldError(error, 'password')}
        />
        <FormError error={error} />
        <p class="notice" aria-live="polite">
          {notice}
        </p>
        <button type="submit" class="button primary" disabled={busy}>
          {hasPassword ? 'Change password' : 'Set a password'}
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
      <h2 id="passkeys-heading">Passkeys</h2>
      <p>
        A passkey signs you in without a password: your phone, laptop, password manager or security
        key keeps it, and it cannot be phished. Delete any you do not recognise.
      </p>
      {passkeys && passkeys.length === 0 && <p>No passkeys yet.</p>}
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
      {!supported && <p class="hint">This browser cannot make passkeys.</p>}
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
              setNotice(`Passkey “${made.name}” added.`)
              await load()
            } catch (e) {
              setError(e)
            } finally {
              setBusy(false)
            }
          }}
        >
          <Field
            label="Name of the new passkey"
            name="name"
            maxLength={60}
            hint="Where it lives, such as “Work laptop”."
            error={fieldError(error, 'name')}
          />
          <button type="submit" class="button primary" disabled={busy}>
            Add a passkey
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
              props.onChanged(`Passkey renamed “${name}”.`)
            } catch (e) {
              setError(e)
            }
          }}
        >
          <Field
            label={`New name for ${passkey.name}`}
            name="name"
            defaultValue={passkey.name}
            required
            maxLength={60}
            error={fieldError(error, 'name')}
          />
          <FormError error={error} />
          <div class="actions">
            <button type="submit" class="button primary">
              Save name
            </button>
            <button type="button" class="button" onClick={() => setRenaming(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <strong>{passkey.name}</strong>
          <span class="muted">
            {' '}
            added <When iso={passkey.createdAt} />, last used{' '}
            <When iso={passkey.lastUsedAt} never="never" />
          </span>
          <div class="actions">
            <button
              type="button"
              class="button"
              aria-label={`Rename ${passkey.name}`}
              onClick={() => setRenaming(true)}
            >
              Rename
            </button>
            <ConfirmButton
              label="Delete"
              ariaLabel={`Delete ${passkey.name}`}
              title={`Delete the passkey ${passkey.name}?`}
              confirmLabel="Delete the passkey"
              onConfirm={async () => {
                await api('DELETE', apiPath`/v1/user/passkeys/${passkey.id}`)
                props.onChanged(`Passkey “${passkey.name}” deleted.`)
              }}
            >
              <p>
                It signs no one in from now on. Browsers it already signed in stay signed in until
                you sign them out below.
              </p>
            </ConfirmButton>
          </div>
        </>
      )}
    </li>
  )
}

const METHOD_TEXT: Record<string, string> = {
  password: 'signed in with the password',
  signup: 'signed up',
  passkey: 'signed in with a passkey',
  link: 'signed in with a link',
  setup: 'set up the account',
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
      <h2 id="sessions-heading">Signed-in browsers</h2>
      <FormError error={props.error} />
      {props.sessions && (
        <ul class="item-list">
          {props.sessions.map((s) => (
            <li key={s.id} class={`item${s.current ? ' current' : ''}`}>
              <strong>{s.userAgent ? browserName(s.userAgent) : 'Unknown browser'}</strong>
              {s.current && <span class="badge">This browser</span>}
              <div class="muted">
                {METHOD_TEXT[s.method] ?? s.method} <When iso={s.createdAt} />
                {s.ip && <> from {s.ip}</>}; last used <When iso={s.lastSeenAt} />
              </div>
              {!s.current && (
                <div class="actions">
                  <ConfirmButton
                    label="Sign out"
                    ariaLabel={`Sign out ${s.userAgent ? browserName(s.userAgent) : 'the browser'} (last used ${s.lastSeenAt})`}
                    title="Sign that browser out?"
                    confirmLabel="Sign it out"
                    onConfirm={async () => {
                      await api('DELETE', apiPath`/v1/user/sessions/${s.id}`)
                      setNotice('That browser was signed out.')
                      await props.reload()
                    }}
                  >
                    <p>It must sign in again to use your account.</p>
                  </ConfirmButton>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      <ConfirmButton
        label="Sign out everywhere else"
        title="Sign out every other browser?"
        confirmLabel="Sign them out"
        disabled={others.length === 0}
        onConfirm={async () => {
          await api('DELETE', '/v1/user/sessions')
          setNotice('Every other browser was signed out.')
          await props.reload()
        }}
      >
        <p>
          Every browser signed in as you, except this one, is signed out at once. If someone may
          know your password, change it too.
        </p>
      </ConfirmButton>
      <p class="notice" aria-live="polite">
        {notice}
      </p>
    </section>
  )
}
