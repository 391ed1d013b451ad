import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { apiKeyRoutes } from '../keys/keys.routes.ts'
import { reachableStatuses } from '../statuses/sharing.service.ts'
import type { AccountDeps } from '../users/accounts.service.ts'
import { LoginThrottle } from '../users/login-throttle.ts'
import type { PasswordHasher } from '../users/passwords.ts'
import type { SessionDeps, SessionHolders } from '../users/sessions.service.ts'
import { userRoutes } from '../users/users.routes.ts'
import { accountMailRoutes, emailVerificationRoutes } from './account-mail.routes.ts'
import { AccountMail } from './account-mail.service.ts'
import { authRoutes } from './auth.routes.ts'
import { exportRoutes } from './export.routes.ts'
import { passkeyRoutes, passkeySignInRoutes } from './passkeys.routes.ts'
import { profileRoutes } from './profile.routes.ts'
import { setupRoutes } from './setup.routes.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** E-mail of accounts (docs/accounts.md#e-mail): verification, reset and sign-in links. */
    accountMail: AccountMail
  }
}

export interface AccountsOptions {
  /** Who may sign up (SIGNUP): `invite` (default) or `open` (docs/accounts.md#signing-up). */
  signup?: 'invite' | 'open'
  /** How passwords are hashed and checked (default scrypt; tests count the checks). */
  passwordHasher?: PasswordHasher
}

/**
 * Accounts (docs/accounts.md): signing up, in and out, sessions, profiles, passkeys, API
 * keys and the links mailed for them. What ends or changes through this instance ends or is
 * forgotten on every instance (docs/api.md#authentication): here at once, elsewhere through
 * the revocation bus.
 */
export const accounts = fp(
  async (app: FastifyInstance, options: AccountsOptions) => {
    const { database, clock, publicUrl, keyCache, streamCredentials, revocations } = app
    const holders: SessionHolders = {
      endSessions(sessionIds) {
        streamCredentials.endSessions(sessionIds)
        void revocations.publish({ sessionIds: [...sessionIds] })
      },
      userChanged(userId) {
        keyCache.forgetUser(userId)
        void streamCredentials.checkAll()
        void revocations.publish({ userId })
      },
    }
    // sessions (docs/accounts.md#sessions): what a browser signed in with, server-side
    const sessions: SessionDeps = { db: database.db, holders, clock }
    const accountDeps: AccountDeps = {
      db: database.db,
      plans: app.plans,
      clock,
      holders,
      throttle: new LoginThrottle({ clock }),
      ...(options.passwordHasher && { hasher: options.passwordHasher }),
    }
    // e-mail (docs/accounts.md#e-mail): verification, password reset and sign-in links
    const mail = new AccountMail({
      db: database.db,
      mailer: app.mailer,
      linkBase: app.linkBase,
      log: app.log,
      clock,
      holders,
      keys: { cache: keyCache, sessions: streamCredentials, revocations },
      ...(options.passwordHasher && { hasher: options.passwordHasher }),
    })
    app.decorate('accountMail', mail)
    // messages under way are sent before storage closes (onClose hooks run last-added first)
    app.addHook('onClose', () => mail.idle())

    app.keyedRoutes(userRoutes, {})
    app.keyedRoutes(profileRoutes, {
      accounts: accountDeps,
      sessions,
      mail,
      // deleting an account (docs/accounts.md#delete-your-account): its statuses go through
      // the statuses' services, so their streams hear it
      deletion: {
        db: database.db,
        writer: database.writer,
        clock,
        statuses: app.services,
        userChanged: (userId) => holders.userChanged?.(userId),
      },
      clock,
      publicUrl,
    })
    app.keyedRoutes(emailVerificationRoutes, { mail })
    // taking one's data along (docs/accounts.md#export-your-data)
    app.keyedRoutes(exportRoutes, { db: database.db, clock })
    app.keyedRoutes(apiKeyRoutes, {
      deps: {
        db: database.db,
        cache: keyCache,
        sessions: streamCredentials,
        revocations,
        statusReach: reachableStatuses,
      },
    })
    app.keyedRoutes(passkeyRoutes, { db: database.db, clock, publicUrl })
    // signing up, in and out: anyone may call them (they declare `auth: 'none'`)
    await app.register(authRoutes, {
      accounts: accountDeps,
      sessions,
      signup: options.signup ?? 'invite',
      publicUrl,
      mail,
    })
    // following e-mailed and printed links (their pages: web/auth-pages.routes.ts)
    await app.register(accountMailRoutes, { mail, publicUrl })
    // signing in with a passkey: anyone may try (docs/api.md#passkeys)
    await app.register(passkeySignInRoutes, { db: database.db, clock, publicUrl })
    // the first start's setup link (docs/app.md#the-first-start): anyone holding it
    await app.register(setupRoutes, {
      db: database.db,
      clock,
      publicUrl,
      userChanged: (userId) => holders.userChanged?.(userId),
      ...(options.passwordHasher && { hasher: options.passwordHasher }),
    })
  },
  { name: 'accounts', dependencies: ['core', 'keyed-api', 'keys', 'live-updates', 'statuses'] },
)
