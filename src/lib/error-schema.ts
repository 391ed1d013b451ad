import { Type } from 'typebox'
import { ERROR_CODES } from './errors.ts'
import { StringEnum } from './schema.ts'

/** The body of every error response (docs/api.md#errors). */
export const ErrorSchema = Type.Object(
  {
    message: Type.String({
      description: 'Short human-readable text; may change between releases: do not parse it',
    }),
    errorCode: StringEnum(ERROR_CODES, {
      description: 'Stable machine-readable code: branch on this',
    }),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'Per-field details (validation and plan errors)',
      }),
    ),
    requestId: Type.String({ description: 'The request id, as in the `x-request-id` header' }),
  },
  {
    $id: 'Error',
    description: 'An error: a stable `errorCode` and a message (docs/api.md#errors)',
  },
)

/** Response schemas every API route shares for its failures. */
export const ERROR_RESPONSES = { '4xx': ErrorSchema, '5xx': ErrorSchema }
