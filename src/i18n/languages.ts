// The languages statusd speaks (docs/languages.md): one line each, in the language's own
// name. Each has its catalog beside this file, `locales/<code>.json`, with the same keys as
// every other (test/i18n/catalogs.test.ts). Plain data, shared with the app.

export const LANGUAGES = {
  en: 'English',
  de: 'Deutsch',
} as const

export type Language = keyof typeof LANGUAGES

/** The language of whoever has not chosen one, and of every text a catalog lacks. */
export const DEFAULT_LANGUAGE: Language = 'en'

export const LANGUAGE_CODES = Object.keys(LANGUAGES) as Language[]

export function isLanguage(code: unknown): code is Language {
  return typeof code === 'string' && Object.hasOwn(LANGUAGES, code)
}

/**
 * The first of the `wanted` language tags (most wanted first: `de-AT`, `en`) statusd
 * speaks, by its primary subtag; the default when none is.
 */
export function languageFor(wanted: readonly string[]): Language {
  for (const tag of wanted) {
    const primary = tag.trim().toLowerCase().split(/[-_]/)[0]
    if (isLanguage(primary)) return primary
  }
  return DEFAULT_LANGUAGE
}
