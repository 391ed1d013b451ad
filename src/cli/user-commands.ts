import { parseArgs } from 'node:util'
import type { Config } from '../config.ts'
import { allUsers, createUser, setUser, type UserView } from '../modules/users/users.service.ts'
import { type Output, print, takesOnly, UsageError, withDb } from './context.ts'

export const USER_USAGE = `statusd user add --name NAME [--email EMAIL] [--plan PLAN] [--unverified] [--json]
statusd user list [--json]
statusd user set <id|email> [--plan PLAN] [--verified | --unverified] [--json]`

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
      takesOnly('user set', parsed, ['user', 'plan', 'verified', 'unverified'], 1)
      const who = values.user ?? positionals[0]
      if (!who) throw new UsageError('user set needs a user id or e-mail')
      if (values.verified && values.unverified)
        throw new UsageError('give --verified or --unverified, not both')
      const verified = values.verified ? true : values.unverified ? false : undefined
      if (values.plan === undefined && verified === undefined)
        throw new UsageError('user set needs --plan, --verified or --unverified')
      const user = await withDb(config, (db) =>
        setUser(db, config.plans, who, {
          ...(values.plan !== undefined && { plan: values.plan }),
          ...(verified !== undefined && { verified }),
        }),
      )
      return print(output, user, () => `updated user ${describe(user)}`)
    }
    default:
      throw new UsageError(`unknown command: user ${sub ?? ''}`.trim())
  }
}
