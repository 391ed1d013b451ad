import { isIPv6 } from 'node:net'
import { parseArgs } from 'node:util'
import type { Config } from '../config.ts'
import { systemClock } from '../lib/clock.ts'
import { createSignInLink } from '../modules/users/sign-in-links.service.ts'
import { allUsers, createUser, setUser, type UserView } from '../modules/users/users.service.ts'
import { type Output, print, takesOnly, UsageError, withDb } from './context.ts'

export const USER_USAGE = `statusd user add --name NAME [--email EMAIL] [--plan PLAN] [--unverified] [--json]
statusd user list [--json]
statusd user set <id|email> [--name NAME] [--email EMAIL] [--plan PLAN] [--verified | --unverified] [--json]
statusd user link <id|email> [--json]     print a one-time sign-in link (valid one hour)`

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
  `${u.id}  ${u.name}${u.email ? ` <${u.email}>` : ''}  plan=${u.plan}  ${u.authLevel}`

/** `statusd user …` */
export async function userCommand(args: string[], config: Config, output: Output): Promise<void> {
  const [sub, ...rest] = args
  const parsed = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      plan: { type: 'string' },
      user: { type: 'string' },
      verified: { type: 'boolean' },
      unverified: { type: 'boolean' },
      json: { type: 'boolean' },
    },
  })
  const { values, positionals } = parsed
  switch (sub) {
    case 'add': {
      takesOnly('user add', parsed, ['name', 'email', 'plan', 'unverified'])
      if (!values.name) throw new UsageError('user add needs --name')
      const user = await withDb(config, (db) =>
        createUser(db, config.plans, {
          name: values.name as string,
          ...(values.email !== undefined && { email: values.email }),
          plan:
            values.plan ??
            (Object.hasOwn(config.plans, 'free')
              ? 'free'
              : (Object.keys(config.plans)[0] as string)),
          verified: !values.unverified,
        }),
      )
      return print(output, user, () => `created user ${describe(user)}`)
    }
    case 'list': {
      takesOnly('user list', parsed, [])
      const users = await withDb(config, (db) => allUsers(db))
      return print(output, users, () => users.map(describe).join('\n') || '(no users)')
    }
    case 'set': {
      takesOnly('user set', parsed, ['user', 'plan', 'verified', 'unverified', 'name', 'email'], 1)
      const who = values.user ?? positionals[0]
      if (!who) throw new UsageError('user set needs a user id or e-mail')
      if (values.verified && values.unverified)
        throw new UsageError('give --verified or --unverified, not both')
      const verified = values.verified ? true : values.unverified ? false : undefined
      if (
        values.plan === undefined &&
        verified === undefined &&
        values.name === undefined &&
        values.email === undefined
      )
        throw new UsageError('user set needs --name, --email, --plan, --verified or --unverified')
      const user = await withDb(config, (db) =>
        setUser(db, config.plans, who, {
          ...(values.plan !== undefined && { plan: values.plan }),
          ...(verified !== undefined && { verified }),
          ...(values.name !== undefined && { name: values.name }),
          ...(values.email !== undefined && { email: values.email }),
        }),
      )
      return print(output, user, () => `updated user ${describe(user)}`)
    }
    case 'link': {
      takesOnly('user link', parsed, ['user'], 1)
      const who = values.user ?? positionals[0]
      if (!who) throw new UsageError('user link needs a user id or e-mail')
      const link = await withDb(config, (db) =>
        createSignInLink(db, systemClock, who, linkBase(config)),
      )
      return print(output, link, () =>
        [
          `One-time sign-in link for user ${link.userId}, valid until ${link.expiresAt}.`,
          'Whoever opens it is signed in as this user: hand it over privately.',
          '',
          `    ${link.url}`,
        ].join('\n'),
      )
    }
    default:
      throw new UsageError(`unknown command: user ${sub ?? ''}`.trim())
  }
}
