import { html, type SafeHtml } from './html.ts'
import { colorOf } from './palette.ts'

const LABEL_COLOR = '#555555'
const HEIGHT = 20
const PADDING = 6

// note: made on the first badge, not at start (cold start)
let graphemes: Intl.Segmenter | undefined

/**
 * Approximate width of text in 11px Verdana (what badges use). Exact metrics do not matter:
 * the text is drawn with `textLength`, so it always fills the box it is given. Counted per
 * grapheme, by its first character: combining marks, emoji sequences and flags take no room
 * of their own (counted per code point, they widened the box and stretched the glyphs).
 */
export function textWidth(text: string): number {
  let width = 0
  graphemes ??= new Intl.Segmenter('en', { granularity: 'grapheme' })
  for (const { segment } of graphemes.segment(text)) {
    const code = segment.codePointAt(0) ?? 0
    const ch = String.fromCodePoint(code)
    if (code > 0x2e80)
      width += 11 // CJK, emoji: full width
    else if ("il.,:;|!'`Ijt()[]{} ".includes(ch)) width += 4
    else if ('mwMW@%'.includes(ch)) width += 10
    else if (ch >= 'A' && ch <= 'Z') width += 7.5
    else width += 6.5
  }
  return Math.ceil(width)
}

function segment(text: string, x: number, width: number): SafeHtml {
  const middle = x + width / 2
  const length = Math.max(width - 2 * PADDING, 1)
  // the shadow line first, then the text (the usual badge look)
  return html`<text x="${middle}" y="15" fill="#010101" fill-opacity=".3" textLength="${length}" lengthAdjust="spacingAndGlyphs">${text}</text><text x="${middle}" y="14" textLength="${length}" lengthAdjust="spacingAndGlyphs">${text}</text>`
}

/** A README badge "name | value", the value in the status colour. Every text is escaped. */
export function renderBadge(label: string, value: string, colorNo: number): string {
  const left = textWidth(label) + 2 * PADDING
  const right = textWidth(value) + 2 * PADDING
  const width = left + right
  const color = colorOf(colorNo)
  return html`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${HEIGHT}" role="img" aria-label="${`${label}: ${value}`}"><title>${`${label}: ${value}`}</title><linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient><clipPath id="r"><rect width="${width}" height="${HEIGHT}" rx="3" fill="#fff"/></clipPath><g clip-path="url(#r)"><rect width="${left}" height="${HEIGHT}" fill="${LABEL_COLOR}"/><rect x="${left}" width="${right}" height="${HEIGHT}" fill="${color}"/><rect width="${width}" height="${HEIGHT}" fill="url(#s)"/></g><g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">${segment(label, 0, left)}${segment(value, left, right)}</g></svg>`
    .value
}

/** The colour of a stale status's badge: slate, the service's grey (docs/notifications.md#staleness). */
export const STALE_COLOR_NO = 11

/**
 * The badge of a status: its value in its colour; a stale one grey, its value marked
 * "stale" (colour is never the only signal).
 */
export const badgeSvg = (badge: {
  name: string
  value: string | null
  colorNo: number
  stale: boolean
}): string =>
  badge.stale
    ? renderBadge(badge.name, `${badge.value ?? '—'} · stale`, STALE_COLOR_NO)
    : renderBadge(badge.name, badge.value ?? '—', badge.colorNo)
