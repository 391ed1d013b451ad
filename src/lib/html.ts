/**
 * A tiny auto-escaping template for HTML and SVG (after Hono's `html`): every interpolation
 * is escaped unless it is already SafeHtml, so markup can only come from the templates.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/**
 * What XML 1.0 does not allow anywhere (its `Char` production): C0 controls other than tab and
 * line breaks, lone surrogates, U+FFFE and U+FFFF. The API refuses them in text
 * (docs/api.md#validation-rules); text stored before that rule still renders well-formed.
 */
const NOT_XML = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu

/**
 * Escapes text for HTML/XML element content and quoted attribute values; a character XML
 * does not allow becomes U+FFFD, so the SVG badge is always well-formed.
 */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string).replace(NOT_XML, '\uFFFD')

/**
 * Text with every character XML does not allow turned into U+FFFD, for a renderer that
 * escapes markup itself (the badge's).
 */
export const xmlText = (text: string): string => text.replace(NOT_XML, '\uFFFD')

/** Markup that is safe to insert as it is (it came from a template). */
export class SafeHtml {
  readonly value: string
  constructor(value: string) {
    this.value = value
  }
  toString(): string {
    return this.value
  }
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

/**
 * Tagged template: `html\`<p>${text}</p>\``. Strings, numbers and the like are escaped;
 * SafeHtml (nested templates) and arrays of them are inserted; null, undefined and false
 * render nothing. Attribute values must be quoted in the template.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? ''
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '')
  return new SafeHtml(out)
}
