import { LANGUAGE_CODES, LANGUAGES, type Language } from '../../../src/i18n/languages.ts'
import { chooseLanguage, locale, t } from '../i18n.ts'

/**
 * Choose the app's language (docs/languages.md): each language in its own name. The choice
 * is kept on this device; `onChosen` keeps it elsewhere too (the account, when signed in).
 */
export function LanguagePicker({ onChosen }: { onChosen?: (code: Language) => void }) {
  return (
    <label class="language-picker">
      {t('common.language.label')}{' '}
      <select
        value={locale.value}
        onChange={(event) => {
          const code = (event.currentTarget as HTMLSelectElement).value as Language
          void chooseLanguage(code).then(() => onChosen?.(code))
        }}
      >
        {LANGUAGE_CODES.map((code) => (
          <option key={code} value={code} lang={code}>
            {LANGUAGES[code]}
          </option>
        ))}
      </select>
    </label>
  )
}
