import { useEffect, useRef, useState } from 'preact/hooks'
import { t } from '../i18n.ts'

// A copy button (docs/app.md#sharing-a-status): the Clipboard API, and a visible "Copied"
// that a screen reader hears too (aria-live), so the person knows it worked without looking
// for a toast. When the browser refuses (no permission, not a secure context) it says so:
// the text stays on screen to copy by hand.

export function CopyButton(props: { text: string; label: string; class?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle')
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  useEffect(() => () => clearTimeout(timer.current), [])
  return (
    <span class={`copy ${props.class ?? ''}`}>
      <button
        type="button"
        class="button"
        onClick={async () => {
          clearTimeout(timer.current)
          try {
            await navigator.clipboard.writeText(props.text)
            setState('copied')
          } catch {
            setState('failed')
          }
          timer.current = setTimeout(() => setState('idle'), 4000)
        }}
      >
        {props.label}
      </button>
      <span class="copy-note" aria-live="polite">
        {state === 'copied' ? t('app.copy.copied') : state === 'failed' ? t('app.copy.failed') : ''}
      </span>
    </span>
  )
}

/** A value to copy: the text itself (readonly, selectable) and its copy button. */
export function CopyField(props: { label: string; text: string; buttonLabel: string }) {
  return (
    <div class="copy-field">
      <label>
        <span class="copy-field-label">{props.label}</span>
        <input
          type="text"
          readOnly
          value={props.text}
          onFocus={(event) => event.currentTarget.select()}
        />
      </label>
      <CopyButton text={props.text} label={props.buttonLabel} />
    </div>
  )
}
