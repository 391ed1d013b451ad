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

/** Escapes text for HTML/XML element content and quoted attribute values. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string)

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
