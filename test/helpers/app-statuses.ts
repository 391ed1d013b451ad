import assert from 'node:assert/strict'
import type { Page } from 'playwright-core'
import { asSession } from './accounts.ts'
import type { AppServer, Person } from './app-browser.ts'

// Statuses for the app's browser tests (docs/app.md#the-board): made and shared through the
// API as the people the browsers sign in as, and the board's tiles found by their names.

/** Creates a status as `person` through the API; returns the Status. */
export async function createAs(
  server: AppServer,
  person: Person,
  key: string,
  body: Record<string, unknown>,
): Promise<{ id: string } & Record<string, unknown>> {
  const res = await asSession(server.t, person.cookie, 'POST', `/v1/status-keys/${key}`, body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** The owner offers a role and the person accepts it (docs/accounts.md#invitations). */
export async function giveRole(
  server: AppServer,
  owner: Person,
  statusId: string,
  person: Person,
  role: 'updater' | 'subscriber',
): Promise<void> {
  const offered = await asSession(
    server.t,
    owner.cookie,
    'PUT',
    `/v1/status/${statusId}/users/${person.id}`,
    { role },
  )
  assert.equal(offered.statusCode, 202, offered.body)
  const accepted = await asSession(
    server.t,
    person.cookie,
    'POST',
    `/v1/user/invitations/${offered.json().id}/accept`,
  )
  assert.equal(accepted.statusCode, 200, accepted.body)
}

export const tile = (page: Page, name: string) =>
  page.locator('li.board-tile').filter({ has: page.getByRole('heading', { name, exact: true }) })

/** Waits until the tile's value chip reads `value`. */
export const expectTileValue = (page: Page, name: string, value: string) =>
  tile(page, name).locator('.value-chip').filter({ hasText: value }).waitFor()

/** The text a field's aria-describedby points to (its hint and error). */
export async function describedText(page: Page, label: string): Promise<string> {
  const input = page.getByLabel(label, { exact: true })
  const ids = ((await input.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean)
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()))
  return texts.join(' ')
}

/** Puts a person on the tests' unlimited plan (more than the free plan's statuses). */
export async function makeUnlimited(server: AppServer, person: Person): Promise<void> {
  await server.t.database.db
    .updateTable('users')
    .set({ plan: 'unlimited' })
    .where('id', '=', person.id)
    .execute()
}

/** A status of `person`'s, made through the API with their session (its id, share id, name). */
export async function makeStatus(
  server: AppServer,
  person: Person,
  key: string,
  body: Record<string, unknown>,
): Promise<{ id: string; shareId: string; name: string }> {
  return (await createAs(server, person, key, body)) as {
    id: string
    shareId: string
    name: string
  }
}
