// The server's texts in the reader's language (docs/languages.md): pages, e-mails and
// notification texts. The catalogs are plain text: whoever puts a text into HTML escapes it
// whole (src/lib/html.ts), and no catalog text holds markup.
import { readFileSync } from 'node:fs'
import { createInstance, type TFunction } from 'i18next'
import { DEFAULT_LANGUAGE, isLanguage, LANGUAGE_CODES, type Language } from './languages.ts'

const catalog = (code: Language): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`./locales/${code}.json`, import.meta.url), 'utf8'))

const i18n = createInstance()
i18n.init({
  initAsync: false,
  resources: Object.fromEntries(
    LANGUAGE_CODES.map((code) => [code, { translation: catalog(code) }]),
  ),
  lng: DEFAULT_LANGUAGE,
  fallbackLng: DEFAULT_LANGUAGE,
  supportedLngs: LANGUAGE_CODES,
  interpolation: { escapeValue: false },
})

/** The language statusd writes in for `locale`: it, when statusd speaks it, else the default. */
export const languageOf = (locale: string | null | undefined): Language =>
  isLanguage(locale) ? locale : DEFAULT_LANGUAGE

/** The texts in `locale` (a user's `locale`, a page's language); the default for none. */
export function translator(locale: string | null | undefined): TFunction {
  return i18n.getFixedT(languageOf(locale))
}

/**
 * An instant as a reader of `locale` writes it, with its time zone (UTC: a mail or notice
 * does not know the reader's): "29 November 2026 at 17:00 UTC".
 */
export function dateTimeIn(locale: string | null | undefined, iso: string): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  return new Intl.DateTimeFormat(languageOf(locale), {
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone: 'UTC',
    timeZoneName: 'short',
  }).format(date)
}
