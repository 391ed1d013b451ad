import { signal } from '@preact/signals'
import { t } from '../i18n.ts'

// Live changes announced to screen readers (docs/app.md#accessibility), politely and
// without flooding: changes arriving within a second are told as one message, and a burst
// of more than three becomes a count.

const message = signal('')
let pending: string[] = []
let timer: ReturnType<typeof setTimeout> | null = null

export function announce(text: string): void {
  pending.push(text)
  if (timer) return
  timer = setTimeout(() => {
    timer = null
    const texts = pending
    pending = []
    message.value =
      texts.length > 3 ? t('app.announcer.changed', { count: texts.length }) : texts.join(' ')
  }, 1000)
}

/** The one polite live region; render it once per screen that announces. */
export function Announcer() {
  return (
    <p class="sr-only" aria-live="polite" aria-atomic="true">
      {message.value}
    </p>
  )
}
