import { signal } from '@preact/signals'
import { createInstance } from 'i18next'
import {
  DEFAULT_LANGUAGE,
  isLanguage,
  type Language,
  languageFor,
} from '../../src/i18n/languages.ts'
import en from '../../src/i18n/locales/en.json'

// The app's texts in the person's language (docs/languages.md). English is in the bundle;
// another language's catalog is fetched once, when it is chosen. `t` reads `locale`, so
// every component that shows a text shows it anew when the language changes.

const STORED = 'statusd.locale'

const i18n = createInstance()
i18n.init({
  initAsync: false,
  resources: { en: { translation: en } },
  lng: DEFAULT_LANGUAGE,
  fallbackLng: DEFAULT_LANGUAGE,
  interpolation: { escapeValue: false },
})

/** The language shown: the code to give `Intl` and `<html lang>`. */
export const locale = signal<Language>(DEFAULT_LANGUAGE)

/** The text `key` in the language shown, with `values` put in (`{{name}}`, `count`). */
export function t(key: string, values?: Record<string, unknown>): string {
  return i18n.getFixedT(locale.value)(key, values ?? {})
}

/** Shows the app in `code`, fetching its catalog the first time. */
export async function showLanguage(code: Language): Promise<void> {
  if (!i18n.hasResourceBundle(code, 'translation')) {
    const catalog = await import(`../../src/i18n/locales/${code}.json`)
    i18n.addResourceBundle(code, 'translation', catalog.default)
  }
  locale.value = code
  document.documentElement.lang = code
}

/** The language chosen on this device (the picker stores it), if any. */
export function storedLanguage(): Language | null {
  try {
    const code = localStorage.getItem(STORED)
    return isLanguage(code) ? code : null
  } catch {
    return null
  }
}

/** Keeps `code` as this device's choice and shows it. */
export function chooseLanguage(code: Language): Promise<void> {
  try {
    localStorage.setItem(STORED, code)
  } catch {
    // a browser that keeps nothing still shows the language for this visit
  }
  return showLanguage(code)
}

/** The language to start in: the account's, else this device's choice, else the browser's. */
export function startingLanguage(accountLocale?: string | null): Language {
  if (isLanguage(accountLocale)) return accountLocale
  return storedLanguage() ?? languageFor(navigator.languages ?? [navigator.language])
}

/** Shows the starting language; a catalog that cannot be fetched (offline) leaves English. */
export async function showStartingLanguage(accountLocale?: string | null): Promise<void> {
  try {
    await showLanguage(startingLanguage(accountLocale))
  } catch {
    // the texts stay in the default language, which is in the bundle
  }
}
