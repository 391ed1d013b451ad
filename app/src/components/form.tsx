import type { InputHTMLAttributes } from 'preact'
import { useId } from 'preact/hooks'
import { ApiError } from '../api.ts'

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

/** The API's message for a field of a failed request. */
export const fieldError = (error: unknown, field: string): string | undefined =>
  error instanceof ApiError ? error.fieldMessage(field) : undefined
