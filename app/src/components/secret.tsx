import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import { t } from '../i18n.ts'
import { Rich } from './rich.tsx'

// A secret the API shows once (a new API key, a webhook's signing secret): on screen until
// the person says they have it, with a copy button and a plain warning that it will not be
// shown again (docs/app.md#api-keys). The panel takes the focus, so a screen reader reads it.

export function SecretOnce(props: {
  /** What it is: "Your new API key". */
  title: string
  secret: string
  /** What the secret is for, shown under the warning. */
  children?: ComponentChildren
  onDone: () => void
}) {
  const panel = useRef<HTMLElement>(null)
  const id = useId()
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle')
  useEffect(() => panel.current?.focus(), [props.secret])
  return (
    <section class="secret-once" ref={panel} tabIndex={-1} aria-label={props.title}>
      <h2>{props.title}</h2>
      <p class="secret-warning">
        <Rich
          text={t('app.secret.warning')}
          parts={{ strong: (text) => <strong>{text}</strong> }}
        />
      </p>
      {props.children}
      <label class="label" for={id}>
        {t('app.secret.label')}
      </label>
      <div class="secret-row">
        <input
          id={id}
          class="secret-value"
          type="text"
          readOnly
          value={props.secret}
          spellcheck={false}
          autocomplete="off"
          onFocus={(event) => event.currentTarget.select()}
        />
        <button
          type="button"
          class="button primary"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(props.secret)
              setCopied('copied')
            } catch {
              setCopied('failed')
            }
          }}
        >
          {t('app.secret.copy')}
        </button>
      </div>
      <p class="hint" aria-live="polite">
        {copied === 'copied'
          ? t('app.secret.copied')
          : copied === 'failed'
            ? t('app.secret.failed')
            : ''}
      </p>
      <button type="button" class="button" onClick={props.onDone}>
        {t('app.secret.done')}
      </button>
    </section>
  )
}
