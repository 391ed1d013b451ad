import type { Static } from 'typebox'
import { Type } from 'typebox'

/** Body of `POST /v1/status/:statusId/transfer`. */
export const TransferBodySchema = Type.Object(
  { userId: Type.String({ description: 'The user offered the status' }) },
  { additionalProperties: false, examples: [{ userId: 'Jt0bq3WkLs8dF1xVn6RoP' }] },
)

/** The answer to accepting a transfer (docs/sharing.md#transfer). */
export const TransferredStatusSchema = Type.Object(
  {
    statusId: Type.String(),
    statusKey: Type.Union([Type.String(), Type.Null()], {
      description: 'Your key for the status now: its key, or null when you had a status by it',
    }),
    shareId: Type.String(),
    name: Type.String(),
    role: Type.Literal('owner'),
    keyKept: Type.Boolean({
      description:
        'False when you owned a status by its key already: the status you took lost its key',
    }),
  },
  {
    $id: 'TransferredStatus',
    additionalProperties: false,
    description: 'A status you now own: a transfer you accepted',
  },
)
export type TransferredStatus = Static<typeof TransferredStatusSchema>
