import type { ComponentChildren } from 'preact'
import { useId, useRef, useState } from 'preact/hooks'
import { t } from '../i18n.ts'
import { FormError } from './form.tsx'

// A destructive action behind a confirmation (docs/app.md#accessibility): the native
// <dialog> opened with showModal(), so focus moves into it, stays there, and Escape cancels.
// The action's own error shows inside the dialog; it closes only once the action succeeded.

export function ConfirmButton(props: {
  /** The button that opens the dialog. */
  label: string
  /** Its accessible name when the visible label is short ("Revoke" → "Revoke key sdk_…"). */
  ariaLabel?: string
  /** The dialog's heading: the question. */
  title: string
  /** What happens, in plain words. */
  children?: ComponentChildren
  /** The button that does it. */
  confirmLabel: string
  buttonClass?: string
  disabled?: boolean
  onConfirm: () => Promise<void>
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const id = useId()
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  return (
    <>
      <button
        type="button"
        class={`button ${props.buttonClass ?? 'danger'}`}
        aria-label={props.ariaLabel}
        disabled={props.disabled}
        onClick={() => {
          setError(null)
          dialog.current?.showModal()
        }}
      >
        {props.label}
      </button>
      <dialog ref={dialog} class="confirm" aria-labelledby={`${id}-title`}>
        <form
          method="dialog"
          onSubmit={async (event) => {
            event.preventDefault()
            setBusy(true)
            setError(null)
            try {
              await props.onConfirm()
              dialog.current?.close()
            } catch (e) {
              setError(e)
            } finally {
              setBusy(false)
            }
          }}
        >
          <h2 id={`${id}-title`}>{props.title}</h2>
          {props.children}
          <FormError error={error} />
          <div class="actions">
            <button type="submit" class="button danger" disabled={busy}>
              {props.confirmLabel}
            </button>
            <button type="button" class="button" onClick={() => dialog.current?.close()}>
              {t('app.confirm.cancel')}
            </button>
          </div>
        </form>
      </dialog>
    </>
  )
}
