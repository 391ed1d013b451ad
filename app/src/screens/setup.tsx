import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, api, apiPath } from '../api.ts'
import { Field, FormError, fieldError } from '../components/form.tsx'
import { Plain } from '../components/layout.tsx'
import { Rich } from '../components/rich.tsx'
import { t } from '../i18n.ts'
import { Link, navigate, route } from '../router.tsx'
import { loadMe } from '../session.ts'
import type { PasskeyRegistrationOptions } from '../types.ts'
import { createPasskey, passkeysSupported, webauthnProblem } from '../webauthn.ts'

// First run in the browser (docs/app.md#the-first-start): the setup link the first start
// printed opens this screen, which asks the person who started the service for a name, an
// e-mail address and a password, or a passkey instead, and leaves them signed in as the
// operator. The link works once (docs/api.md#first-run-setup).

type LinkState = 'checking' | 'open' | 'unknown' | 'gone'

/**
 * Whether a passkey can be made here: a browser that makes them, on a host name (an IP
 * address is never a passkey's domain, docs/accounts.md#passkeys).
 */
const passkeysHere = () => passkeysSupported() && !/^(\d+\.){3}\d+$|^\[/.test(location.hostname)

export default function Setup() {
  const token = route.value.params.token ?? ''
  const [state, setState] = useState<LinkState>('checking')
  const [checkError, setCheckError] = useState<unknown>(null)
  useEffect(() => {
    api('GET', apiPath`/v1/auth/setup/${token}`).then(
      () => setState('open'),
      (e: unknown) => {
        if (e instanceof ApiError && e.status === 404) setState('unknown')
        else if (e instanceof ApiError && e.status === 410) setState('gone')
        else setCheckError(e)
      },
    )
  }, [token])

  if (checkError)
    return (
      <Plain>
        <h1>{t('app.setup.title')}</h1>
        <FormError error={checkError} />
      </Plain>
    )
  if (state === 'checking')
    return (
      <Plain>
        <h1>{t('app.setup.title')}</h1>
        <p class="loading" aria-live="polite">
          {t('app.setup.loading')}
        </p>
      </Plain>
    )
  if (state === 'unknown')
    return (
      <Plain>
        <h1>{t('app.setup.unknown.title')}</h1>
        <p>{t('app.setup.unknown.text')}</p>
        <LostLink />
      </Plain>
    )
  if (state === 'gone')
    return (
      <Plain>
        <h1>{t('app.setup.gone.title')}</h1>
        <p>{t('app.setup.gone.text')}</p>
        <LostLink />
      </Plain>
    )
  return <SetupForm token={token} />
}

/** What to do without a working link (docs/operations.md#first-start). */
function LostLink() {
  return (
    <p>
      <Rich
        text={t('app.setup.lostLink')}
        parts={{
          signIn: (text) => <Link href="/sign-in">{text}</Link>,
          list: () => <code>statusd user list</code>,
          link: () => <code>statusd user link &lt;id&gt;</code>,
        }}
      />
    </p>
  )
}

function SetupForm(props: { token: string }) {
  const form = useRef<HTMLFormElement>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  async function finish(body: Record<string, unknown>) {
    await api('POST', apiPath`/v1/auth/setup/${props.token}`, { body })
    await loadMe()
    navigate('/', { replace: true })
  }

  /** Name and e-mail as typed, once the browser finds both filled in and well formed. */
  function who(): { name: string; email: string } | null {
    const el = form.current
    if (!el) return null
    const name = el.elements.namedItem('name') as HTMLInputElement
    const email = el.elements.namedItem('email') as HTMLInputElement
    if (!name.reportValidity() || !email.reportValidity()) return null
    return { name: name.value, email: email.value }
  }

  async function run(work: () => Promise<void>) {
    setBusy(true)
    setError(null)
    try {
      await work()
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  return (
    <Plain>
      <h1>{t('app.setup.title')}</h1>
      <p>{t('app.setup.intro')}</p>
      <form
        ref={form}
        onSubmit={(event) => {
          event.preventDefault()
          const data = new FormData(event.currentTarget)
          void run(() =>
            finish({
              name: data.get('name'),
              email: data.get('email'),
              password: data.get('password'),
            }),
          )
        }}
      >
        <Field
          label={t('app.setup.name')}
          name="name"
          autocomplete="name"
          required
          maxLength={60}
          hint={t('app.setup.nameHint')}
          error={fieldError(error, 'name')}
        />
        <Field
          label={t('app.setup.email')}
          name="email"
          type="email"
          autocomplete="email"
          required
          hint={t('app.setup.emailHint')}
          error={fieldError(error, 'email')}
        />
        <Field
          label={t('app.setup.password')}
          name="password"
          type="password"
          autocomplete="new-password"
          required
          minLength={12}
          hint={t('app.setup.passwordHint')}
          error={fieldError(error, 'password')}
        />
        <FormError error={error} />
        <div class="actions">
          <button type="submit" class="button primary" disabled={busy}>
            {t('app.setup.finish')}
          </button>
          {passkeysHere() && (
            <button
              type="button"
              class="button"
              disabled={busy}
              onClick={() => {
                const person = who()
                if (!person) return
                void run(async () => {
                  const options = await api<PasskeyRegistrationOptions>(
                    'POST',
                    apiPath`/v1/auth/setup/${props.token}/passkey-options`,
                    { body: person },
                  )
                  let response: Awaited<ReturnType<typeof createPasskey>>
                  try {
                    response = await createPasskey(options)
                  } catch (e) {
                    throw new Error(webauthnProblem(e))
                  }
                  await finish({ ...person, passkey: { response } })
                })
              }}
            >
              {t('app.setup.passkey')}
            </button>
          )}
        </div>
      </form>
    </Plain>
  )
}
