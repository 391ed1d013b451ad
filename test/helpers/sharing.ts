import assert from 'node:assert/strict'
import type { TestApp, TestUser } from './app.ts'

export const ACCESS_TYPES = ['public', 'private'] as const
export const LEVELS = ['public', 'private', 'owner'] as const
export type AccessType = (typeof ACCESS_TYPES)[number]
export type Level = (typeof LEVELS)[number]

/**
 * The cast of the roles (docs/sharing.md#roles): an owner, a granted updater and subscriber, and a
 * stranger.
 */
export interface Cast {
  owner: TestUser
  updater: TestUser
  subscriber: TestUser
  stranger: TestUser
}

export async function makeCast(t: TestApp): Promise<Cast> {
  return {
    owner: await t.user({ name: 'Olivia Owner' }),
    updater: await t.user({ name: 'Uma Updater' }),
    subscriber: await t.user({ name: 'Sam Subscriber' }),
    stranger: await t.user({ name: 'Stan Stranger' }),
  }
}

/** Creates a status by key as the owner; returns the Status body. */
export async function createStatus(
  t: TestApp,
  owner: TestUser,
  key: string,
  body: Record<string, unknown>,
): Promise<{ id: string; shareId: string } & Record<string, unknown>> {
  const res = await t.request(owner, 'POST', `/v1/status-keys/${key}`, body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/**
 * The owner offers a role and the user accepts it (docs/accounts.md#invitations: a role is
 * never imposed); asserts both worked. A role the user holds, or a lower one, takes effect
 * at once (200) and needs no answer.
 */
export async function grant(
  t: TestApp,
  owner: TestUser,
  statusId: string,
  user: TestUser,
  role: 'updater' | 'subscriber',
): Promise<void> {
  const res = await t.request(owner, 'PUT', `/v1/status/${statusId}/users/${user.id}`, { role })
  assert.ok(res.statusCode === 202 || res.statusCode === 200, res.body)
  if (res.statusCode === 200) return
  const accepted = await t.request(user, 'POST', `/v1/user/invitations/${res.json().id}/accept`)
  assert.equal(accepted.statusCode, 200, accepted.body)
  assert.equal(accepted.json().role, role)
}
