import type { InputHTMLAttributes } from 'preact'
import { useId, useState } from 'preact/hooks'
import { ApiError, api } from '../api.ts'
import { t } from '../i18n.ts'
import { me } from '../session.ts'

// Form pieces every screen shares: a labelled field whose error (the API's own message for
// that field) is tied to it with aria-describedby, and a form-level error that is announced.

export function Field(
  props: {
    label: string
    error?: string | undefined
    hint?: string
  } & InputHTMLAttributes<HTMLInputElement>,
) {
  const { label, error, hint, ...input } = props
  const id = useId()
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ')
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <input
        id={id}
        {...input}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
      />
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  )
}

/** The error of a failed request, for the whole form (field errors show at their fields). */
export function FormError(props: { error: unknown }) {
  if (!props.error) return null
  if (props.error instanceof ApiError && UNCONFIRMED.has(props.error.errorCode))
    return <ConfirmAddressFirst />
  const message =
    props.error instanceof ApiError || props.error instanceof Error
      ? props.error.message
      : String(props.error)
  return (
    <p class="form-error" role="alert">
      {message}
    </p>
  )
}

/**
 * The refusals of an account whose address is not confirmed yet: `403 emailNotVerified` (a
 * key, passkey, channel, invitation or share link, docs/accounts.md#until-the-address-is-confirmed)
 * and `403 notVerified` (a new status: with e-mail on, an account is verified by its link).
 * The API's messages name an endpoint or a level, which tell a person nothing.
 */
const UNCONFIRMED = new Set(['emailNotVerified', 'notVerified'])

/** Says what to do, where it was refused: follow the mailed link, or have it mailed again. */
function ConfirmAddressFirst() {
  const email = me.value?.email
  const [sent, setSent] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  return (
    <div class="form-error" role="alert">
      <p>{email ? t('app.form.confirmFirst', { email }) : t('app.form.confirmFirstNoAddress')}</p>
      <p aria-live="polite">
        <button
          type="button"
          class="button"
          disabled={busy}
          onClick={async () => {
            setBusy(true)
            setError(null)
            setSent(null)
            try {
              const answer = await api<{ email: string }>('POST', '/v1/user/email/verification')
              setSent(t('app.form.linkSent', { email: answer.email }))
            } catch (e) {
              setError(e)
            } finally {
              setBusy(false)
            }
          }}
        >
          {t('app.form.sendAgain')}
        </button>{' '}
        {sent}
        {error instanceof Error && error.message}
      </p>
    </div>
  )
}

/** The API's message for a field of a failed request. */
export const fieldError = (error: unknown, field: string): string | undefined =>
  error instanceof ApiError ? error.fieldMessage(field) : undefined
