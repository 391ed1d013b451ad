import type { Static } from 'typebox'
import { Type } from 'typebox'
import type { StatusRow } from '../../db/database.ts'
import { findLinks, isSafeHref } from '../../lib/links.ts'
import { StringEnum, Timestamp } from '../../lib/schema.ts'
import type { Plan } from '../plans/plans.ts'
import { parsePalette } from './palette.ts'
import { staleFieldsOf } from './staleness.ts'
import { PaletteEntrySchema } from './statuses.schemas.ts'
import { endFieldsOf } from './value-end.ts'

export const DescriptionPartSchema = Type.Object(
  {
    text: Type.String(),
    href: Type.Optional(Type.String({ description: 'Present when this part is a link' })),
  },
  { additionalProperties: false },
)
export type DescriptionPart = Static<typeof DescriptionPartSchema>

/**
 * The description cut into text and links, for clients that render it (the share page does,
 * server-side and live). Links only when the owner's plan has `descriptionLinks`; only
 * http(s) and mailto targets, so a `javascript:` text can never become a link.
 */
export function descriptionParts(text: string, linksAllowed: boolean): DescriptionPart[] {
  if (text === '') return []
  // note: the detector the plan gate refuses links with (lib/links.ts), so what a plan
  // without links refuses, a plan with links makes clickable
  const matches = linksAllowed ? findLinks(text) : []
  const parts: DescriptionPart[] = []
  let at = 0
  for (const m of matches) {
    // anything else a detector might find (ftp:, say) stays text
    if (!isSafeHref(m.url)) continue
    if (m.index > at) parts.push({ text: text.slice(at, m.index) })
    parts.push({ text: m.text, href: m.url })
    at = m.lastIndex
  }
  if (at < text.length) parts.push({ text: text.slice(at) })
  return parts
}

/**
 * The anonymous view of a public status (`GET /v1/share/:shareId`, the share page and its
 * event stream): what a viewer sees. Left out as the owner's business: the status id (the
 * API handle for changes), the owner's status key, and the access settings.
 */
export const ShareViewSchema = Type.Object(
  {
    shareId: Type.String(),
    name: Type.String(),
    type: StringEnum(['text']),
    value: Type.Union([Type.String(), Type.Null()]),
    description: Type.String(),
    descriptionParts: Type.Array(DescriptionPartSchema),
    colorNo: Type.Integer({ minimum: 1, maximum: 12 }),
    palette: Type.Array(PaletteEntrySchema, {
      description: 'The value palette (docs/app.md#value-palette); [] when none',
    }),
    stale: Type.Boolean({
      description: 'No value update for its staleAfter (docs/notifications.md#staleness)',
    }),
    staleSince: Type.Union([Timestamp(), Type.Null()], {
      description: 'When it turned stale; null while it is not',
    }),
    changeCount: Type.Integer({ minimum: 0 }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
    valueUpdatedAt: Type.Union([Timestamp(), Type.Null()]),
    valueUntil: Type.Union([Timestamp(), Type.Null()], {
      description:
        'When the value ends and `valueAfter` follows (docs/api.md#values-that-end); null: it does not end',
    }),
    valueAfter: Type.Union([Type.String(), Type.Null()], {
      description: 'The value that follows at `valueUntil`; null when no end is pending',
    }),
  },
  { $id: 'ShareView', additionalProperties: false, description: 'Public view of a status' },
)
export type ShareView = Static<typeof ShareViewSchema>

/**
 * Maps a (public) status row to its share view at `nowMs`; links follow the owner's plan.
 * note: `staleAfter` itself is the owner's setting, left out as the access settings are;
 * whether the status is stale is what a viewer needs.
 */
export function toShareView(row: StatusRow, ownerPlan: Plan, nowMs: number): ShareView {
  const { stale, staleSince } = staleFieldsOf(row, nowMs)
  return {
    shareId: row.share_id,
    name: row.name,
    type: row.type as 'text',
    value: row.value,
    description: row.description,
    descriptionParts: descriptionParts(row.description, ownerPlan.descriptionLinks),
    colorNo: row.color_no,
    palette: parsePalette(row.palette),
    stale,
    staleSince,
    changeCount: Number(row.change_count),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    valueUpdatedAt: row.value_updated_at,
    ...endFieldsOf(row),
  }
}
