import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef, useState } from 'preact/hooks'

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
        Copy it now: <strong>you will not see it again.</strong>
      </p>
      {props.children}
      <label class="label" for={id}>
        Secret
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
          Copy
        </button>
      </div>
      <p class="hint" aria-live="polite">
        {copied === 'copied'
          ? 'Copied to the clipboard.'
          : copied === 'failed'
            ? 'The browser did not allow copying: select the text and copy it.'
            : ''}
      </p>
      <button type="button" class="button" onClick={props.onDone}>
        I have copied it
      </button>
    </section>
  )
}
