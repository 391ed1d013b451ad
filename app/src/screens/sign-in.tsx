import { useState } from 'preact/hooks'
import { api } from '../api.ts'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { Plain } from '../components/layout.tsx'
import { Link, navigate, sameOriginTarget } from '../router.tsx'
import { loadMe } from '../session.ts'
import { passkeysSupported, signInWithPasskey } from '../webauthn.ts'

// Sign in with e-mail and password (docs/accounts.md#signing-in).

export default function SignIn() {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const next = new URLSearchParams(location.search).get('next')
  // only a page of this origin: never an open redirect
  const goOn = () => navigate(sameOriginTarget(next), { replace: true })
  return (
    <Plain>
      <h1>Sign in</h1>
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
          label="E-mail"
          name="email"
          type="email"
          autocomplete="username"
          required
          error={fieldError(error, 'email')}
        />
        <Field
          label="Password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
          error={fieldError(error, 'password')}
        />
        <FormError error={error} />
        <button type="submit" class="button primary" disabled={busy}>
          Sign in
        </button>
      </form>
      {passkeysSupported() && (
        <div class="passkey-sign-in">
          <p class="or">or</p>
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
                  setError(new Error('Passkey sign-in was cancelled or timed out.'))
                else setError(e)
              } finally {
                setBusy(false)
              }
            }}
          >
            Use a passkey
          </button>
        </div>
      )}
      <p>
        New here? <Link href="/sign-up">Create an account</Link>
      </p>
    </Plain>
  )
}
