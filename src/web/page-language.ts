import type { FastifyRequest } from 'fastify'
import Negotiator from 'negotiator'
import { Type } from 'typebox'
import { DEFAULT_LANGUAGE, isLanguage, LANGUAGE_CODES, type Language } from '../i18n/languages.ts'
import { html, type SafeHtml } from '../lib/html.ts'

// The language of a page statusd serves (docs/languages.md#which-language-a-person-sees):
// `?lang=` when it names one statusd speaks, else the browser's `Accept-Language`, else
// English. A page chosen by the header varies by it (`Vary: Accept-Language`), so a cache
// keeps one copy per language.

/** The `Vary` header of a page whose language the request's `Accept-Language` may choose. */
export const VARY_LANGUAGE = { vary: 'Accept-Language' } as const

/** The query of a page: `lang`, a language statusd speaks (another is ignored). */
export const PageQuerySchema = Type.Object({
  lang: Type.Optional(
    Type.String({
      maxLength: 35,
      description:
        'The language of the page (`en`, `de`); without it, or for one statusd does not speak, the browser’s Accept-Language chooses, else English',
    }),
  ),
})

export function pageLanguage(request: FastifyRequest): Language {
  const asked = (request.query as { lang?: unknown } | undefined)?.lang
  if (isLanguage(asked)) return asked
  const [best] = new Negotiator(request).languages([...LANGUAGE_CODES])
  return isLanguage(best) ? best : DEFAULT_LANGUAGE
}

/** What stands for the piece of markup in a translated sentence until it is put in. */
const MARK = '\u0000'

/**
 * A translated sentence with markup where its `{{time}}` (or other value) goes: `text` is
 * the sentence translated with MARK as that value ("Changed \0"), `inner` the markup.
 */
export function withMarkup(translate: (mark: string) => string, inner: SafeHtml): SafeHtml {
  const [before = '', ...after] = translate(MARK).split(MARK)
  return html`${before}${inner}${after.join('')}`
}
