import { useEffect, useState } from 'preact/hooks'
import { ApiError, api, apiPath } from '../api.ts'
import { useAuthSettings } from '../auth-settings.ts'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { Plain } from '../components/layout.tsx'
import { Rich } from '../components/rich.tsx'
import { t } from '../i18n.ts'
import { Link, navigate } from '../router.tsx'
import { loadMe, me } from '../session.ts'
import type { InvitationLinkPreview } from '../types.ts'

// Signing up (docs/app.md#signing-up, docs/accounts.md#signing-up), on its own or through an
// invitation link (`/sign-up?invitation=<token>`, where the link's page leads): the account
// and the role come in one request. Someone signed in already accepts the invitation instead.
// Whether this service lets anyone sign up is the server's to say (`GET /v1/auth/settings`):
// by invitation only, the screen says so instead of offering a form; a 403 is shown as is.

const ROLE_TEXT = {
  subscriber: () => t('app.signUp.invitation.subscriber'),
  updater: () => t('app.signUp.invitation.updater'),
} as const

const goHome = () => navigate('/', { replace: true })

export default function SignUp() {
  const token = new URLSearchParams(location.search).get('invitation')
  const [preview, setPreview] = useState<InvitationLinkPreview | null>(null)
  const [previewError, setPreviewError] = useState<unknown>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    if (!token) return
    api<InvitationLinkPreview>('GET', apiPath`/v1/invitations/${token}`).then(
      setPreview,
      setPreviewError,
    )
  }, [token])

  const settings = useAuthSettings()
  const user = me.value
  if (token && user) return <AcceptAsMe token={token} preview={preview} error={previewError} />
  // without an invitation, the service says beforehand whether anyone may sign up
  if (!token && settings === undefined)
    return (
      <Plain>
        <h1>{t('app.signUp.title')}</h1>
        <p class="loading" aria-live="polite">
          {t('app.signUp.loading')}
        </p>
      </Plain>
    )
  if (!token && settings?.signup === 'invite') return <ByInvitation />

  const inviteOnly = error instanceof ApiError && error.status === 403 && !token
  return (
    <Plain>
      <h1>{t('app.signUp.title')}</h1>
      {token && <InvitationSummary preview={preview} error={previewError} />}
      {inviteOnly ? (
        <div role="alert" class="callout">
          <p>
            <Rich
              text={t('app.signUp.inviteOnly')}
              parts={{ strong: (text) => <strong>{text}</strong> }}
            />
          </p>
        </div>
      ) : null}
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const form = new FormData(event.currentTarget)
          setBusy(true)
          setError(null)
          try {
            await api('POST', '/v1/auth/signup', {
              body: {
                name: form.get('name'),
                email: form.get('email'),
                password: form.get('password'),
                ...(token && { invitation: token }),
              },
            })
            await loadMe()
            goHome()
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <Field
          label={t('app.signUp.name')}
          name="name"
          autocomplete="name"
          required
          maxLength={60}
          hint={t('app.signUp.nameHint')}
          error={fieldError(error, 'name')}
        />
        <Field
          label={t('app.signUp.email')}
          name="email"
          type="email"
          autocomplete="email"
          required
          error={fieldError(error, 'email')}
        />
        <Field
          label={t('app.signUp.password')}
          name="password"
          type="password"
          autocomplete="new-password"
          required
          minLength={12}
          hint={t('app.signUp.passwordHint')}
          error={fieldError(error, 'password')}
        />
        {!inviteOnly && <FormError error={error} />}
        <button type="submit" class="button primary" disabled={busy}>
          {token ? t('app.signUp.submitAndAccept') : t('app.signUp.submit')}
        </button>
      </form>
      <p>
        {t('app.signUp.haveAccount')}{' '}
        <Link href={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`}>
          {t('app.signUp.signIn')}
        </Link>
      </p>
    </Plain>
  )
}

function InvitationSummary(props: { preview: InvitationLinkPreview | null; error: unknown }) {
  if (props.error) {
    const gone = props.error instanceof ApiError && props.error.status === 410
    return (
      <p role="alert" class="form-error">
        {gone
          ? t('app.signUp.invitation.gone')
          : props.error instanceof ApiError && props.error.status === 404
            ? t('app.signUp.invitation.unknown')
            : (props.error as Error).message}
      </p>
    )
  }
  if (!props.preview) return null
  const { statusName, inviterName, role } = props.preview
  return (
    <div class="callout invitation-summary">
      <p>
        <Rich
          text={t('app.signUp.invitation.text', { role: ROLE_TEXT[role]() })}
          parts={{
            who: () => <strong class="user-text">{inviterName}</strong>,
            status: () => <strong class="user-text">{statusName}</strong>,
          }}
        />
      </p>
    </div>
  )
}

/** Signed in already: the invitation is one button away. */
function AcceptAsMe(props: {
  token: string
  preview: InvitationLinkPreview | null
  error: unknown
}) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  return (
    <Plain>
      <h1>{t('app.signUp.accept.title')}</h1>
      <InvitationSummary preview={props.preview} error={props.error} />
      <p>
        <Rich
          text={t('app.signUp.accept.signedInAs')}
          parts={{ name: () => <strong class="user-text">{me.value?.name}</strong> }}
        />
      </p>
      <FormError error={error} />
      <div class="actions">
        <button
          type="button"
          class="button primary"
          disabled={busy || !props.preview}
          onClick={async () => {
            setBusy(true)
            setError(null)
            try {
              await api('POST', apiPath`/v1/invitations/${props.token}/accept`)
              goHome()
            } catch (e) {
              setError(e)
            } finally {
              setBusy(false)
            }
          }}
        >
          {t('app.signUp.accept.accept')}
        </button>
        <Link href="/" class="button quiet">
          {t('app.signUp.accept.notNow')}
        </Link>
      </div>
    </Plain>
  )
}

/** SIGNUP=invite and no invitation: no form to fill in vain, but how to get in. */
function ByInvitation() {
  return (
    <Plain>
      <h1>{t('app.signUp.byInvitation.title')}</h1>
      <div class="callout">
        <p>{t('app.signUp.byInvitation.text')}</p>
      </div>
      <p>
        {t('app.signUp.haveAccount')} <Link href="/sign-in">{t('app.signUp.signIn')}</Link>
      </p>
    </Plain>
  )
}
