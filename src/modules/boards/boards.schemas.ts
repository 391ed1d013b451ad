import type { Static } from 'typebox'
import { Type } from 'typebox'
import { StringEnum, Timestamp } from '../../lib/schema.ts'
import { SingleLineText } from '../../lib/text.ts'
import { MAX_STREAM_STATUSES } from '../events/many-statuses.ts'
import { ShareViewSchema } from '../statuses/share-view.ts'
import { ACCESS_TYPES } from '../statuses/statuses.schemas.ts'

/** The most statuses on one board: what one stream carries (docs/app.md#boards). */
export const MAX_BOARD_STATUSES = MAX_STREAM_STATUSES

const BoardStatusIds = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: MAX_BOARD_STATUSES,
  uniqueItems: true,
  description: `The statuses shown, in display order: 1 to ${MAX_BOARD_STATUSES}, each one you may see`,
})
const BoardName = SingleLineText({ minLength: 1, maxLength: 60 })

export const BoardCreateSchema = Type.Object(
  {
    name: BoardName,
    statusIds: BoardStatusIds,
    accessType: Type.Optional(
      StringEnum(ACCESS_TYPES, {
        description: '`public`: the wall page and its stream show it to anyone; default `private`',
      }),
    ),
  },
  {
    $id: 'BoardCreate',
    additionalProperties: false,
    examples: [
      {
        name: 'Second floor',
        statusIds: ['aQHwS9dTxhRMpO5YH1z4I', 'xuZ3iNb7pHa0oq1PvRfaD'],
        accessType: 'public',
      },
    ],
  },
)
export type BoardCreate = Static<typeof BoardCreateSchema>

export const BoardUpdateSchema = Type.Object(
  {
    name: Type.Optional(BoardName),
    statusIds: Type.Optional(BoardStatusIds),
    accessType: Type.Optional(StringEnum(ACCESS_TYPES)),
  },
  {
    $id: 'BoardUpdate',
    additionalProperties: false,
    minProperties: 1,
    description: 'Any of name, statusIds, accessType; at least one.',
    examples: [{ name: 'Second floor (east)' }],
  },
)
export type BoardUpdate = Static<typeof BoardUpdateSchema>

export const BoardSchema = Type.Object(
  {
    id: Type.String(),
    shareId: Type.String({ description: 'Names the wall page: /b/<shareId>' }),
    name: Type.String(),
    statusIds: Type.Array(Type.String()),
    accessType: StringEnum(ACCESS_TYPES),
    url: Type.String({ description: 'The wall page' }),
    createdAt: Timestamp(),
    updatedAt: Timestamp(),
  },
  {
    $id: 'Board',
    additionalProperties: false,
    description: 'A named set of statuses shown together (docs/app.md#boards-and-the-wall)',
    examples: [
      {
        id: 'bQ2m8ZxR0vLwT5aN7pYcE',
        shareId: 'k7d2mq4a',
        name: 'Second floor',
        statusIds: ['aQHwS9dTxhRMpO5YH1z4I', 'xuZ3iNb7pHa0oq1PvRfaD'],
        accessType: 'public',
        url: 'https://status.example.com/b/k7d2mq4a',
        createdAt: '2026-11-22T04:26:43.754Z',
        updatedAt: '2026-11-22T04:26:43.754Z',
      },
    ],
  },
)
export type Board = Static<typeof BoardSchema>

/** One tile of a public board: the status's share view, or null when it is not shown. */
export const BoardTileSchema = Type.Object(
  {
    statusId: Type.String(),
    status: Type.Union([ShareViewSchema, Type.Null()], {
      description: 'null: not available (private, or deleted): nothing of it is shown',
    }),
  },
  { additionalProperties: false },
)

export const PublicBoardSchema = Type.Object(
  {
    shareId: Type.String(),
    name: Type.String(),
    tiles: Type.Array(BoardTileSchema),
  },
  {
    $id: 'PublicBoard',
    additionalProperties: false,
    description: 'What a public board shows anyone (docs/app.md#boards-and-the-wall)',
  },
)
export type PublicBoard = Static<typeof PublicBoardSchema>

export const BoardIdParamsSchema = Type.Object({ boardId: Type.String() })
export const BoardShareIdParamsSchema = Type.Object({ shareId: Type.String() })
