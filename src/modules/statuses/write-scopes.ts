import { insufficientScope } from '../../lib/errors.ts'
import { type CredentialLimits, SCOPES, type Scope, satisfies } from '../keys/scopes.ts'
import { VALUE_FIELDS } from './value-end.ts'

/**
 * The fields whose change is an access setting: `status:manage`, not `status:write`
 * (docs/accounts.md#scoped-keys). `listed` is one too wherever a status has it.
 */
const ACCESS_FIELDS: ReadonlySet<string> = new Set([
  'accessType',
  'accessTypeUserList',
  'accessTypeHistory',
  'listed',
])

/** A write to a status, as the scope rule sees it: the fields sent, or a delete. */
export type StatusWrite =
  | { kind: 'update'; fields: readonly string[] }
  | { kind: 'create'; fields: readonly string[] }
  | { kind: 'delete' }

/**
 * The scopes an API key needs for a write (docs/accounts.md#scoped-keys), in SCOPES order:
 * `value` alone (with its end: `valueUntil`, `valueAfter`) needs `status:value` (which `status:write` includes); any other field
 * `status:write`; an access setting (`accessType`, `accessTypeUserList`, `accessTypeHistory`,
 * `listed`) `status:manage`; creating a status `status:write`, and deleting one
 * `status:manage`. Sending a field counts, whether or not its value changes. Pure: the one
 * statement of the rule, used by the statuses services and tested on its own.
 */
export function requiredWriteScopes(write: StatusWrite): Scope[] {
  const needed = new Set<Scope>()
  if (write.kind === 'delete') needed.add('status:manage')
  else {
    if (write.kind === 'create') needed.add('status:write')
    for (const field of write.fields)
      if (VALUE_FIELDS.has(field)) needed.add('status:value')
      else if (ACCESS_FIELDS.has(field)) needed.add('status:manage')
      else needed.add('status:write')
  }
  return SCOPES.filter((s) => needed.has(s))
}

/**
 * Throws 403 insufficientScope naming the first scope the caller's API key lacks for this
 * write; a caller without limits (a session) may make any.
 */
export function assertWriteScopes(limits: CredentialLimits | undefined, write: StatusWrite): void {
  if (!limits) return
  const missing = requiredWriteScopes(write).find((s) => !satisfies(limits.scopes, s))
  if (missing === undefined) return
  const what =
    write.kind === 'delete'
      ? 'delete a status'
      : write.kind === 'create'
        ? 'create this status'
        : 'make this change'
  throw insufficientScope(
    `This API key lacks the scope ${missing}, needed to ${what}`,
    'scopes',
    `must include ${missing}`,
  )
}
