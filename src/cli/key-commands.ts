import { Command } from 'commander'
import type { Config } from '../config.ts'
import type { Database } from '../db/engine.ts'
import type { BusLog } from '../lib/event-bus.ts'
import { KEY_REVOCATIONS, type KeyRevocationBus } from '../modules/keys/key-revocations.ts'
import { expandScopes, SCOPE_NAMES } from '../modules/keys/scopes.ts'
import { type AdminContext, type Output, print, UsageError, withDb } from './context.ts'

/**
 * Runs a command that may end a key or change a user with the database's credentials bus: on
 * PostgreSQL the change is announced (NOTIFY) and every server drops what it cached and ends
 * the streams concerned at once; on SQLite the server notices this process's commit itself
 * within a quarter of a second (docs/api.md#authentication).
 */
export async function announcing<T>(
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

/**
 * The services the key commands run, loaded when one runs: the client commands (and
 * --version) start without them (docs/cli.md).
 */
const services = async () => {
  const { apiKeysOf, createApiKey, revokeKey, rotateKey } = await import(
    '../modules/keys/keys.service.ts'
  )
  const { reachableStatuses } = await import('../modules/statuses/sharing.service.ts')
  const { resolveUser } = await import('../modules/users/users.service.ts')
  return { apiKeysOf, createApiKey, revokeKey, rotateKey, reachableStatuses, resolveUser }
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

/** Collects a repeatable option's values. */
const collect = (value: string, previous: string[] = []) => [...previous, value]

/** `statusd key …` */
export function keyCommands(program: Command, ctx: AdminContext): void {
  const key = program
    .command('key')
    .description("create, list, revoke and rotate users' API keys")
    .addHelpText(
      'after',
      `
Examples:
  $ statusd key create --user ada@example.com --label ci
  $ statusd key create --user ada@example.com --scope status:read,status:value --status <statusId>
  $ statusd key rotate <keyId> --grace 3600`,
    )

  key
    .command('create')
    .description('create an API key for a user; the key is shown only once')
    .option('--user <id|email>', 'whose key (required)')
    .option('--label <label>', 'a name for the key')
    .option('--expires <iso-8601>', 'when it stops working, e.g. 2030-12-31')
    .option(
      '--scope <scope,…>',
      `what it may do (repeatable): ${SCOPE_NAMES.join(', ')}, status:*; default every scope`,
      collect,
    )
    .option('--status <statusId,…>', 'confine it to these statuses (repeatable)', collect)
    .addHelpText(
      'after',
      '\nExample:\n  $ statusd key create --user ada@example.com --label door --scope status:value --json',
    )
    .action(
      async (o: {
        user?: string
        label?: string
        expires?: string
        scope?: string[]
        status?: string[]
      }) => {
        const who = o.user
        if (!who) throw new UsageError('key create needs --user')
        const scopes = o.scope === undefined ? undefined : scopeOption(o.scope)
        const statusIds = o.status === undefined ? undefined : listOption(o.status)
        const { createApiKey, reachableStatuses, resolveUser } = await services()
        const created = await withDb(await ctx.config(), async (db) =>
          createApiKey(db, (await resolveUser(db, who)).id, {
            ...(o.label !== undefined && { label: o.label }),
            ...(o.expires !== undefined && { expiresAt: o.expires }),
            ...(scopes !== undefined && { scopes }),
            ...(statusIds !== undefined && { statusIds, statusReach: reachableStatuses }),
          }),
        )
        print(ctx.output, created, () =>
          [
            `created key ${created.id} for user ${created.userId}${created.expiresAt ? `, expires ${created.expiresAt}` : ''}`,
            `scopes: ${created.scopes.join(' ')}${created.statusIds ? `; only statuses ${created.statusIds.join(' ')}` : ''}`,
            'The key is shown only now; store it safely:',
            '',
            `    ${created.key}`,
          ].join('\n'),
        )
      },
    )

  key
    .command('list')
    .description("list a user's keys (never the secrets)")
    .option('--user <id|email>', 'whose keys (required)')
    .addHelpText('after', '\nExample:\n  $ statusd key list --user ada@example.com')
    .action(async (o: { user?: string }) => {
      const who = o.user
      if (!who) throw new UsageError('key list needs --user')
      const { apiKeysOf, resolveUser } = await services()
      const keys = await withDb(await ctx.config(), async (db) =>
        apiKeysOf(db, (await resolveUser(db, who)).id),
      )
      print(
        ctx.output,
        keys,
        () =>
          keys
            .map(
              (k) =>
                `${k.id}  ${k.prefix}…  ${k.label ?? ''}  created ${k.createdAt}${k.revokedAt ? `  REVOKED ${k.revokedAt}` : ''}${k.expiresAt ? `  expires ${k.expiresAt}` : ''}${k.replacedBy ? `  replaced by ${k.replacedBy}` : ''}  scopes ${k.scopes.join(',')}${k.statusIds ? `  statuses ${k.statusIds.join(',')}` : ''}`,
            )
            .join('\n') || '(no keys)',
      )
    })

  key
    .command('revoke')
    .description('revoke a key: it stops working')
    .argument('<keyId>', 'a key id')
    .addHelpText('after', '\nExample:\n  $ statusd key revoke <keyId>')
    .action(async (keyId: string) => {
      const { revokeKey } = await services()
      const revoked = await withDb(await ctx.config(), (db, database) =>
        announcing(database, (revocations) => revokeKey({ db, revocations }, keyId)),
      )
      print(ctx.output, revoked, () => `revoked key ${revoked.id} (${revoked.prefix}…)`)
    })

  key
    .command('rotate')
    .description('replace a key by a new one; the old one works --grace seconds more')
    .argument('<keyId>', 'a key id')
    .option('--grace <seconds>', 'how long the old key keeps working, 0 to 86400 (default 0)')
    .addHelpText('after', '\nExample:\n  $ statusd key rotate <keyId> --grace 3600')
    .action(async (keyId: string, o: { grace?: string }) => {
      const grace = o.grace === undefined ? 0 : Number(o.grace)
      if (o.grace !== undefined && (o.grace.trim() === '' || !Number.isInteger(grace)))
        throw new UsageError(`--grace must be a whole number of seconds, got "${o.grace}"`)
      const { rotateKey } = await services()
      const rotated = await withDb(await ctx.config(), (db, database) =>
        announcing(database, (revocations) =>
          rotateKey({ db, revocations }, keyId, { graceSeconds: grace }),
        ),
      )
      const old = rotated.replaced
      print(ctx.output, rotated, () =>
        [
          `rotated key ${old.id} (${old.prefix}…) into ${rotated.id} for user ${rotated.userId}`,
          old.revokedAt
            ? `The old key is revoked.`
            : `The old key keeps working until ${old.expiresAt}.`,
          'The new key is shown only now; store it safely:',
          '',
          `    ${rotated.key}`,
        ].join('\n'),
      )
    })
}

/**
 * One `statusd key …` command alone, as main() would run it, for code that needs no more (the
 * stream revocation test runs the CLI's own revoke this way).
 */
export async function keyCommand(args: string[], config: Config, output: Output): Promise<void> {
  const program = new Command().exitOverride()
  keyCommands(program, { output, config: async () => config })
  await program.parseAsync(['key', ...args.filter((a) => a !== '--json')], { from: 'user' })
}
