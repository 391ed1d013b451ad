import { isIPv6 } from 'node:net'
import type { Command } from 'commander'
import type { Config } from '../config.ts'
import { systemClock } from '../lib/clock.ts'
import type { UserView } from '../modules/users/users.service.ts'
import { type AdminContext, print, UsageError, withDb } from './context.ts'
import { announcing } from './key-commands.ts'

/**
 * Where links point: PUBLIC_URL, or else the address the service listens on (HOST, PORT),
 * which serves when the operator opens the link on the same machine or network.
 */
export function linkBase(config: Pick<Config, 'publicUrl' | 'host' | 'port'>): string {
  if (config.publicUrl) return config.publicUrl
  const host = isIPv6(config.host) ? `[${config.host}]` : config.host
  return `http://${host}:${config.port}`
}

const describe = (u: UserView) =>
  `${u.id}  ${u.name}${u.email ? ` <${u.email}>` : ''}  plan=${u.plan}  ${u.authLevel}${u.admin ? '  admin' : ''}`

/**
 * `statusd user …`. The services load when a command runs (`await import`), so that the
 * client commands and --version start without them (docs/cli.md).
 */
export function userCommands(program: Command, ctx: AdminContext): void {
  const user = program
    .command('user')
    .description('add, list and change users; print a sign-in link')
    .addHelpText(
      'after',
      `
Examples:
  $ statusd user add --name "Ada Lovelace" --email ada@example.com
  $ statusd user set ada@example.com --plan pro
  $ statusd user link ada@example.com`,
    )

  user
    .command('add')
    .description('create a user (plan free unless --plan; verified unless --unverified)')
    .option('--name <name>', 'display name (required)')
    .option('--email <email>', 'e-mail address')
    .option('--plan <plan>', 'plan name, e.g. free or pro')
    .option('--unverified', 'the user must verify an e-mail address before writing')
    .addHelpText('after', '\nExample:\n  $ statusd user add --name "Build bot" --plan pro --json')
    .action(async (o: { name?: string; email?: string; plan?: string; unverified?: boolean }) => {
      if (!o.name) throw new UsageError('user add needs --name')
      const config = await ctx.config()
      const { createUser } = await import('../modules/users/users.service.ts')
      const created = await withDb(config, (db) =>
        createUser(db, config.plans, {
          name: o.name as string,
          ...(o.email !== undefined && { email: o.email }),
          plan:
            o.plan ??
            (Object.hasOwn(config.plans, 'free')
              ? 'free'
              : (Object.keys(config.plans)[0] as string)),
          verified: !o.unverified,
        }),
      )
      print(ctx.output, created, () => `created user ${describe(created)}`)
    })

  user
    .command('list')
    .description('list every user, oldest first')
    .addHelpText('after', '\nExample:\n  $ statusd user list --json')
    .action(async () => {
      const { allUsers } = await import('../modules/users/users.service.ts')
      const users = await withDb(await ctx.config(), (db) => allUsers(db))
      print(ctx.output, users, () => users.map(describe).join('\n') || '(no users)')
    })

  user
    .command('set')
    .description("change a user's name, e-mail, plan, verification or operator flag")
    .argument('<id|email>', 'a user id or e-mail')
    .option('--name <name>', 'new display name')
    .option('--email <email>', 'new e-mail address')
    .option('--plan <plan>', 'new plan')
    .option('--verified', 'mark verified')
    .option('--unverified', 'mark unverified')
    .option('--admin', 'make an operator: may administer the instance')
    .option('--no-admin', 'no longer an operator')
    .addHelpText(
      'after',
      '\nExamples:\n  $ statusd user set ada@example.com --plan pro --verified\n  $ statusd user set ada@example.com --admin',
    )
    .action(
      async (
        who: string,
        o: {
          name?: string
          email?: string
          plan?: string
          verified?: boolean
          unverified?: boolean
          admin?: boolean
        },
      ) => {
        if (o.verified && o.unverified)
          throw new UsageError('give --verified or --unverified, not both')
        const verified = o.verified ? true : o.unverified ? false : undefined
        if (
          o.plan === undefined &&
          verified === undefined &&
          o.name === undefined &&
          o.email === undefined &&
          o.admin === undefined
        )
          throw new UsageError(
            'user set needs --name, --email, --plan, --verified, --unverified, --admin or --no-admin',
          )
        const config = await ctx.config()
        const { setUser, countOperators } = await import('../modules/users/users.service.ts')
        // every server forgets the user's cached keys at once: unverified, they are refused
        // everywhere; on another plan, limited by it; no longer an operator, kept out of the
        // admin routes (docs/api.md#authentication)
        const { updated, operators } = await withDb(config, (db, database) =>
          announcing(database, async (changes) => {
            const changed = await setUser(db, config.plans, who, {
              ...(o.plan !== undefined && { plan: o.plan }),
              ...(verified !== undefined && { verified }),
              ...(o.name !== undefined && { name: o.name }),
              ...(o.email !== undefined && { email: o.email }),
              ...(o.admin !== undefined && { admin: o.admin }),
            })
            await changes.publish({ userId: changed.id })
            return { updated: changed, operators: await countOperators(db) }
          }),
        )
        print(ctx.output, updated, () =>
          [
            `updated user ${describe(updated)}`,
            // nobody can reach the admin screens now: the shell is the way back
            ...(operators === 0
              ? ['no user is an operator now: `statusd user set <id> --admin` makes one']
              : []),
          ].join('\n'),
        )
      },
    )

  user
    .command('link')
    .description('print a one-time sign-in link (valid one hour)')
    .argument('<id|email>', 'a user id or e-mail')
    .addHelpText('after', '\nExample:\n  $ statusd user link ada@example.com')
    .action(async (who: string) => {
      const config = await ctx.config()
      const { createSignInLink } = await import('../modules/users/sign-in-links.service.ts')
      const link = await withDb(config, (db) =>
        createSignInLink(db, systemClock, who, linkBase(config)),
      )
      print(ctx.output, link, () =>
        [
          `One-time sign-in link for user ${link.userId}, valid until ${link.expiresAt}.`,
          'Whoever opens it is signed in as this user: hand it over privately.',
          '',
          `    ${link.url}`,
        ].join('\n'),
      )
    })
}
