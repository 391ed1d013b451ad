import { LRUCache } from 'lru-cache'
import { Type } from 'typebox'
import { xmlText } from '../lib/html.ts'
import { StringEnum } from '../lib/schema.ts'
import { SingleLineText } from '../lib/text.ts'
import { colorOf } from './palette.ts'

/** shields.io's styles (docs/sharing.md#badge-styles); `flat` unless asked. */
export const BADGE_STYLES = ['flat', 'flat-square', 'for-the-badge', 'plastic', 'social'] as const
export type BadgeStyle = (typeof BADGE_STYLES)[number]

/**
 * The badge's query string: a style and a label in place of the status's name. Other
 * parameters (cache busters, shields.io's own) are ignored, not refused.
 */
export const BadgeQuerySchema = Type.Object({
  style: Type.Optional(
    StringEnum(BADGE_STYLES, { description: "shields.io's badge style; `flat` when left out" }),
  ),
  label: Type.Optional(
    SingleLineText({
      minLength: 1,
      maxLength: 42,
      description: "The left-hand text in place of the status's name; the rules of a name",
    }),
  ),
})

const LABEL_COLOR = '#555555'

/** The colour of a stale status's badge: slate, the service's grey (docs/notifications.md#staleness). */
export const STALE_COLOR_NO = 11

/** What a badge shows: left text, right text, the right side's colour. */
export interface BadgeText {
  label: string
  message: string
  colorNo: number
}

/**
 * A status's badge: "name | value" in its colour (`label` in place of the name); a stale one
 * grey, its value marked "stale" (colour is never the only signal).
 */
export function badgeText(
  badge: { name: string; value: string | null; colorNo: number; stale: boolean },
  label?: string,
): BadgeText {
  const value = badge.value ?? '—'
  return badge.stale
    ? { label: label ?? badge.name, message: `${value} · stale`, colorNo: STALE_COLOR_NO }
    : { label: label ?? badge.name, message: value, colorNo: badge.colorNo }
}

// note: badge-maker measures every character of its text (real Verdana widths), which costs
// a few times the old hand-written SVG; a README badge is asked for again and again with the
// same text, so the SVGs are kept by what they show (docs/performance.md#badges)
const rendered = new LRUCache<string, string>({ max: 2000 })
// note: loaded on the first badge, not at start: it takes longer to load than the rest of
// the server's start-up (docs/performance.md#cold-start-and-memory)
let badgeMaker: Promise<typeof import('badge-maker')> | undefined

/**
 * The SVG of a badge in shields.io's look, by shields.io's own renderer (badge-maker), which
 * escapes the text; characters XML does not allow become U+FFFD first, so the SVG is always
 * well-formed, whatever text was stored.
 */
export async function renderBadge(text: BadgeText, style: BadgeStyle = 'flat'): Promise<string> {
  const key = `${style}\0${text.colorNo}\0${text.label}\0${text.message}`
  const kept = rendered.get(key)
  if (kept !== undefined) return kept
  badgeMaker ??= import('badge-maker')
  const { makeBadge } = await badgeMaker
  const svg = makeBadge({
    label: xmlText(text.label),
    message: xmlText(text.message),
    color: colorOf(text.colorNo),
    labelColor: LABEL_COLOR,
    style,
  })
  rendered.set(key, svg)
  return svg
}

/** A grey badge of the service's own: "status | not found" and the like. */
export const greyBadge = (message: string, style?: BadgeStyle): Promise<string> =>
  renderBadge({ label: 'status', message, colorNo: STALE_COLOR_NO }, style)

/**
 * A badge in shields.io's endpoint format (https://shields.io/badges/endpoint-badge), for
 * `https://img.shields.io/endpoint?url=…`: the same text and colour as the SVG.
 */
export const badgeEndpoint = (text: BadgeText, style?: BadgeStyle) => ({
  schemaVersion: 1 as const,
  label: text.label,
  message: text.message,
  color: colorOf(text.colorNo),
  labelColor: LABEL_COLOR,
  ...(style !== undefined && { style }),
  // shields.io keeps an endpoint's answer at least this long; asking for less has no effect
  cacheSeconds: 300,
})
