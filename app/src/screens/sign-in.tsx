import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { useAuthSettings } from '../auth-settings.ts'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { Plain } from '../components/layout.tsx'
import { t } from '../i18n.ts'
import { Link, navigate, sameOriginTarget } from '../router.tsx'
import { loadMe } from '../session.ts'
import { passkeysSupported, signInWithPasskey } from '../webauthn.ts'

// Sign in with e-mail and password (docs/accounts.md#signing-in). A forgotten password is
// reset through a mailed link (docs/accounts.md#resetting-a-password): offered only when this
// service sends mail (`GET /v1/auth/settings`), since without it there is no link to send.

export default function SignIn() {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const next = new URLSearchParams(location.search).get('next')
  // only a page of this origin: never an open redirect
  const goOn = () => navigate(sameOriginTarget(next), { replace: true })
  const settings = useAuthSettings()
  const [email, setEmail] = useState('')
  const [forgot, setForgot] = useState(false)
  return (
    <Plain>
      <h1>{t('app.signIn.title')}</h1>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const form = new FormData(event.currentTarget)
          setBusy(true)
          setError(null)
          try {
            await api('POST', '/v1/auth/login', {
              body: { email: form.get('email'), password: form.get('password') },
            })
            await loadMe()
            goOn()
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <Field
          label={t('app.signIn.email')}
          name="email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onInput={(event) => setEmail(event.currentTarget.value)}
          error={fieldError(error, 'email')}
        />
        <Field
          label={t('app.signIn.password')}
          name="password"
          type="password"
          autocomplete="current-password"
          required
          error={fieldError(error, 'password')}
        />
        <FormError error={error} />
        <button type="submit" class="button primary" disabled={busy}>
          {t('app.signIn.submit')}
        </button>
      </form>
      {passkeysSupported() && (
        <div class="passkey-sign-in">
          <p class="or">{t('app.signIn.or')}</p>
          <button
            type="button"
            class="button"
            disabled={busy}
            onClick={async () => {
              setBusy(true)
              setError(null)
              try {
                await signInWithPasskey()
                await loadMe()
                goOn()
              } catch (e) {
                // the person closed the browser's prompt: nothing to report as an error
                if ((e as Error).name === 'NotAllowedError')
                  setError(new Error(t('app.signIn.passkeyCancelled')))
                else setError(e)
              } finally {
                setBusy(false)
              }
            }}
          >
            {t('app.signIn.passkey')}
          </button>
        </div>
      )}
      {settings?.email &&
        (forgot ? (
          <ForgotPassword email={email} />
        ) : (
          <p>
            <button type="button" class="button quiet" onClick={() => setForgot(true)}>
              {t('app.signIn.forgot')}
            </button>
          </p>
        ))}
      <p>
        {t('app.signIn.newHere')} <Link href="/sign-up">{t('app.signIn.signUp')}</Link>
      </p>
    </Plain>
  )
}

/**
 * Asks for a reset link (`POST /v1/auth/password-reset`): the answer is the same 202 for
 * every address, so the screen says only that a link is on its way if an account has it.
 */
function ForgotPassword(props: { email: string }) {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const [sent, setSent] = useState(false)
  return (
    <section class="forgot-password" aria-labelledby="forgot-password">
      <h2 id="forgot-password">{t('app.signIn.forgot')}</h2>
      <p class="hint">{t('app.signIn.forgotHint')}</p>
      <form
        onSubmit={async (event) => {
          event.preventDefault()
          const email = String(new FormData(event.currentTarget).get('email') ?? '')
          setBusy(true)
          setError(null)
          setSent(false)
          try {
            await api('POST', '/v1/auth/password-reset', { body: { email } })
            setSent(true)
          } catch (e) {
            setError(e)
          } finally {
            setBusy(false)
          }
        }}
      >
        <Field
          label={t('app.signIn.yourEmail')}
          name="email"
          type="email"
          autocomplete="email"
          required
          defaultValue={props.email}
          error={fieldError(error, 'email')}
        />
        <FormError error={error} />
        <button type="submit" class="button" disabled={busy}>
          {t('app.signIn.mailLink')}
        </button>
        <p aria-live="polite">{sent && t('app.signIn.linkSent')}</p>
      </form>
    </section>
  )
}
