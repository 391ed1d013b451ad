// The embed (docs/sharing.md#embeds): `<script type="module" src="<statusd>/embed.js">` defines
// `<statusd-status share="<shareId>">` (or `link="<private link token>"`), a status shown live
// on any page. It asks nothing of anyone but the statusd it was loaded from (the module's own
// address), through the public share stream, which answers cross-origin reads. Its styles live
// in its shadow root as a constructed stylesheet, which no page's CSP `style-src` refuses.
// Its texts are the catalogs' `embed` sections alone (docs/languages.md), put in by the build
// for every language, in the language of the element (`lang`, or the page's around it).
import texts from 'statusd:embed-texts'
import { languageFor } from '../../src/i18n/languages.ts'
import { colorOf } from '../../src/web/palette.ts'

/** The share view fields the element shows (the stream's `event: status` data). */
interface View {
  name: string
  value: string | null
  colorNo: number
  stale: boolean
  valueUntil: string | null
  valueAfter: string | null
}

type Key =
  | 'embed.status.loading'
  | 'embed.status.noValue'
  | 'embed.status.stale'
  | 'embed.status.until'
  | 'embed.status.unnamed'
  | 'embed.status.unavailable'

/** The element's text `key` in `lang`, with `{{name}}`s put in. */
function text(lang: string, key: Key, values: Record<string, string> = {}): string {
  const [, section, name] = key.split('.') as [string, string, string]
  const catalog = texts[lang] ?? texts.en
  const template = catalog?.[section]?.[name] ?? texts.en?.[section]?.[name] ?? key
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, n: string) => values[n] ?? '')
}

const STYLE = `
:host {
  display: inline-block;
  font: inherit;
  color: #111827;
  background: #ffffff;
  --statusd-border: #d1d5db;
  --statusd-muted: #4b5563;
}
:host([hidden]) { display: none; }
:host([theme='dark']) {
  color: #f9fafb;
  background: #111827;
  --statusd-border: #4b5563;
  --statusd-muted: #d1d5db;
}
@media (prefers-color-scheme: dark) {
  :host(:not([theme='light'])) {
    color: #f9fafb;
    background: #111827;
    --statusd-border: #4b5563;
    --statusd-muted: #d1d5db;
  }
}
.status {
  display: inline-flex;
  align-items: center;
  gap: 0.5em;
  padding: 0.35em 0.5em;
  border: 1px solid var(--statusd-border);
  border-radius: 0.4em;
}
.name { font-weight: 600; }
.value {
  padding: 0.1em 0.5em;
  border-radius: 0.3em;
  color: #ffffff;
  background: var(--statusd-color, #1d4ed8);
  font-weight: 600;
}
.value.none, .note { color: var(--statusd-muted); background: none; font-weight: normal; }
.note { font-size: 0.85em; }
`

let sheet: CSSStyleSheet | undefined
const styles = (): CSSStyleSheet => {
  if (!sheet) {
    sheet = new CSSStyleSheet()
    sheet.replaceSync(STYLE)
  }
  return sheet
}

/** `14:45` in the viewer's time, with the day when it is not today. */
function timeOf(iso: string, lang: string): string {
  const at = new Date(iso)
  const today = at.toDateString() === new Date().toDateString()
  return new Intl.DateTimeFormat(lang, {
    hour: '2-digit',
    minute: '2-digit',
    ...(!today && { weekday: 'short', day: 'numeric', month: 'short' }),
  }).format(at)
}

/** The statusd this module came from: every request goes there and nowhere else. */
const BASE = new URL('/', import.meta.url)

class StatusdStatus extends HTMLElement {
  static observedAttributes = ['share', 'link']
  #source: EventSource | null = null
  #connected = false
  #name: HTMLElement
  #value: HTMLElement
  #note: HTMLElement

  constructor() {
    super()
    const root = this.attachShadow({ mode: 'open' })
    root.adoptedStyleSheets = [styles()]
    const box = document.createElement('span')
    box.className = 'status'
    box.setAttribute('part', 'status')
    this.#name = document.createElement('span')
    this.#name.className = 'name'
    this.#name.setAttribute('part', 'name')
    // the value is text (colour is never the only signal); changes are announced politely
    const live = document.createElement('span')
    live.setAttribute('role', 'status')
    live.setAttribute('aria-live', 'polite')
    live.setAttribute('aria-atomic', 'true')
    this.#value = document.createElement('span')
    this.#value.className = 'value none'
    this.#value.setAttribute('part', 'value')
    this.#value.textContent = text(this.#lang(), 'embed.status.loading')
    this.#note = document.createElement('span')
    this.#note.className = 'note'
    this.#note.setAttribute('part', 'note')
    live.append(this.#value, this.#note)
    box.append(this.#name, live)
    root.append(box)
  }

  connectedCallback(): void {
    this.#connected = true
    this.#open()
  }

  disconnectedCallback(): void {
    this.#connected = false
    this.#close()
  }

  // note: an element the page holds before this module defines it gets its attributes here
  // first, then connectedCallback: only a change once connected opens another stream
  attributeChangedCallback(_name: string, old: string | null, value: string | null): void {
    if (this.#connected && old !== value) this.#open()
  }

  /** The stream's address: the share stream, or the private link's. */
  #streamUrl(): URL | null {
    const link = this.getAttribute('link')
    if (link) return new URL(`v1/share-links/${encodeURIComponent(link)}/events`, BASE)
    const share = this.getAttribute('share')
    if (share) return new URL(`v1/share/${encodeURIComponent(share)}/events`, BASE)
    return null
  }

  #open(): void {
    this.#close()
    const url = this.#streamUrl()
    if (!url) {
      this.#unavailable(text(this.#lang(), 'embed.status.unnamed'))
      return
    }
    // no credentials: the share views are the same for everyone
    const source = new EventSource(url)
    this.#source = source
    source.addEventListener('status', (event) => {
      this.#show(JSON.parse((event as MessageEvent<string>).data) as View)
    })
    source.addEventListener('unavailable', () => {
      this.#close()
      this.#unavailable(text(this.#lang(), 'embed.status.unavailable'))
    })
    // EventSource comes back by itself after a dropped connection; it gives up (CLOSED) on
    // an answer that is not a stream, such as the 404 of an unknown or private status
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED && this.#source === source)
        this.#unavailable(text(this.#lang(), 'embed.status.unavailable'))
    })
  }

  /** The element's language: its `lang`, or the page's around it, else the browser's. */
  #lang(): string {
    const tag = this.closest('[lang]')?.getAttribute('lang')
    return languageFor(tag ? [tag] : navigator.languages)
  }

  #close(): void {
    this.#source?.close()
    this.#source = null
  }

  #show(view: View): void {
    this.#name.textContent = view.name
    const none = view.value === null
    this.#value.className = none ? 'value none' : 'value'
    const lang = this.#lang()
    this.#value.textContent = none ? text(lang, 'embed.status.noValue') : view.value
    this.#value.style.setProperty('--statusd-color', colorOf(view.colorNo))
    const notes: string[] = []
    if (view.valueUntil !== null && view.valueAfter !== null)
      notes.push(
        text(lang, 'embed.status.until', {
          time: timeOf(view.valueUntil, lang),
          value: view.valueAfter,
        }),
      )
    if (view.stale) notes.push(text(lang, 'embed.status.stale'))
    this.#note.textContent = notes.join(' ')
  }

  #unavailable(text: string): void {
    this.#value.className = 'value none'
    this.#value.textContent = text
    this.#note.textContent = ''
  }
}

if (!customElements.get('statusd-status')) customElements.define('statusd-status', StatusdStatus)
