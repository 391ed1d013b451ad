import { Type } from 'typebox'

/** SPEC §5's error body. */
export const ErrorSchema = Type.Object(
  {
    message: Type.String(),
    errorCode: Type.String(),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() })),
    ),
    requestId: Type.String(),
  },
  { description: 'Error (SPEC §5)' },
)

/** Response schemas every API route shares for its failures. */
export const ERROR_RESPONSES = { '4xx': ErrorSchema, '5xx': ErrorSchema }
