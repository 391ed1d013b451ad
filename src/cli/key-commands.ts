import { parseArgs } from 'node:util'
import type { Config } from '../config.ts'
import type { Database } from '../db/engine.ts'
import type { BusLog } from '../lib/event-bus.ts'
import { KEY_REVOCATIONS, type KeyRevocationBus } from '../modules/keys/key-revocations.ts'
import { apiKeysOf, createApiKey, revokeKey, rotateKey } from '../modules/keys/keys.service.ts'
import { expandScopes, SCOPE_NAMES } from '../modules/keys/scopes.ts'
import { reachableStatuses } from '../modules/statuses/sharing.service.ts'
import { resolveUser } from '../modules/users/users.service.ts'
import { type Output, print, takesOnly, UsageError, withDb } from './context.ts'

export const KEY_USAGE = `statusd key create --user <id|email> [--label LABEL] [--expires ISO-8601]
                  [--scope SCOPE[,SCOPE…]]… [--status STATUS_ID[,STATUS_ID…]]… [--json]
statusd key list --user <id|email> [--json]
statusd key revoke <keyId> [--json]
statusd key rotate <keyId> [--grace SECONDS] [--json]`

/**
 * Runs a command that may end a key with the database's key-revocation bus: on PostgreSQL the
 * end is announced (NOTIFY) and every server drops the key and ends its streams at once; on
 * SQLite nobody else hears it, and servers see it within AUTH_CACHE_SECONDS
 * (docs/api.md#authentication).
 */
async function announcing<T>(
  database: Database,
  run: (revocations: KeyRevocationBus) => Promise<T>,
): Promise<T> {
  const revocations = await database.openEventBus({ ...KEY_REVOCATIONS, log: STDERR_LOG })
  try {
    return await run(revocations)
  } finally {
    await revocations.close()
  }
}

/** The bus's warnings (a NOTIFY that failed) on stderr; nothing else. */
const STDERR_LOG = {
  info() {},
  warn(_obj: unknown, msg?: string) {
    process.stderr.write(`statusd: ${msg ?? 'warning'}\n`)
  },
  error(_obj: unknown, msg?: string) {
    process.stderr.write(`statusd: ${msg ?? 'error'}\n`)
  },
} as unknown as BusLog

/** The values of a repeatable option, each possibly a comma list, blanks dropped. */
const listOption = (values: string[]): string[] =>
  values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '')

/**
 * `--scope` values (docs/accounts.md#scoped-keys): scope names, `status:*` for the four status
 * scopes; default (no --scope) every scope, the operator's key.
 */
function scopeOption(values: string[]) {
  const names = listOption(values)
  const unknown = names.find((n) => !(SCOPE_NAMES as readonly string[]).includes(n))
  if (unknown !== undefined)
    throw new UsageError(`unknown scope "${unknown}": use ${SCOPE_NAMES.join(', ')}`)
  if (names.length === 0) throw new UsageError('--scope needs a scope')
  return expandScopes(names)
}

/** `statusd key …` */
export async function keyCommand(args: string[], config: Config, output: Output): Promise<void> {
  const [sub, ...rest] = args
  const parsed = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      user: { type: 'string' },
      label: { type: 'string' },
      expires: { type: 'string' },
      grace: { type: 'string' },
      scope: { type: 'string', multiple: true },
      status: { type: 'string', multiple: true },
      json: { type: 'boolean' },
    },
  })
  const { values, positionals } = parsed
  switch (sub) {
    case 'create': {
      takesOnly('key create', parsed, ['user', 'label', 'expires', 'scope', 'status'])
      const who = values.user
      if (!who) throw new UsageError('key create needs --user')
      const scopes = values.scope === undefined ? undefined : scopeOption(values.scope)
      const statusIds = values.status === undefined ? undefined : listOption(values.status)
      const key = await withDb(config, async (db) =>
        createApiKey(db, (await resolveUser(db, who)).id, {
          ...(values.label !== undefined && { label: values.label }),
          ...(values.expires !== undefined && { expiresAt: values.expires }),
          ...(scopes !== undefined && { scopes }),
          ...(statusIds !== undefined && { statusIds, statusReach: reachableStatuses }),
        }),
      )
      return print(output, key, () =>
        [
          `created key ${key.id} for user ${key.userId}${key.expiresAt ? `, expires ${key.expiresAt}` : ''}`,
          `scopes: ${key.scopes.join(' ')}${key.statusIds ? `; only statuses ${key.statusIds.join(' ')}` : ''}`,
          'The key is shown only now; store it safely:',
          '',
          `    ${key.key}`,
        ].join('\n'),
      )
    }
    case 'list': {
      takesOnly('key list', parsed, ['user'])
      const who = values.user
      if (!who) throw new UsageError('key list needs --user')
      const keys = await withDb(config, async (db) =>
        apiKeysOf(db, (await resolveUser(db, who)).id),
      )
      return print(
        output,
        keys,
        () =>
          keys
            .map(
              (k) =>
                `${k.id}  ${k.prefix}…  ${k.label ?? ''}  created ${k.createdAt}${k.revokedAt ? `  REVOKED ${k.revokedAt}` : ''}${k.expiresAt ? `  expires ${k.expiresAt}` : ''}${k.replacedBy ? `  replaced by ${k.replacedBy}` : ''}  scopes ${k.scopes.join(',')}${k.statusIds ? `  statuses ${k.statusIds.join(',')}` : ''}`,
            )
            .join('\n') || '(no keys)',
      )
    }
    case 'revoke': {
      takesOnly('key revoke', parsed, [], 1)
      const keyId = positionals[0]
      if (!keyId) throw new UsageError('key revoke needs a key id')
      const key = await withDb(config, (db, database) =>
        announcing(database, (revocations) => revokeKey({ db, revocations }, keyId)),
      )
      return print(output, key, () => `revoked key ${key.id} (${key.prefix}…)`)
    }
    case 'rotate': {
      takesOnly('key rotate', parsed, ['grace'], 1)
      const keyId = positionals[0]
      if (!keyId) throw new UsageError('key rotate needs a key id')
      const grace = values.grace === undefined ? 0 : Number(values.grace)
      if (values.grace !== undefined && (values.grace.trim() === '' || !Number.isInteger(grace)))
        throw new UsageError(`--grace must be a whole number of seconds, got "${values.grace}"`)
      const key = await withDb(config, (db, database) =>
        announcing(database, (revocations) =>
          rotateKey({ db, revocations }, keyId, { graceSeconds: grace }),
        ),
      )
      const old = key.replaced
      return print(output, key, () =>
        [
          `rotated key ${old.id} (${old.prefix}…) into ${key.id} for user ${key.userId}`,
          old.revokedAt
            ? `The old key is revoked.`
            : `The old key keeps working until ${old.expiresAt}.`,
          'The new key is shown only now; store it safely:',
          '',
          `    ${key.key}`,
        ].join('\n'),
      )
    }
    default:
      throw new UsageError(`unknown command: key ${sub ?? ''}`.trim())
  }
}
