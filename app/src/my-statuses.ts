import { api } from './api.ts'
import type { Status, StatusListEntry, Subscription } from './types.ts'

// Which statuses are "mine" (docs/app.md#the-board): those I own (GET /v1/user/status) and
// those I have a role on (GET /v1/user/subscriptions). An updater's status was shared with
// me to set; a subscriber's I follow (whether I followed it or accepted an invitation to).

export type Relation = 'owned' | 'shared' | 'followed'
export type Role = 'owner' | 'updater' | 'subscriber' | 'viewer'

export interface MyStatus {
  statusId: string
  name: string
  relation: Relation
  role: Role
}

export async function loadMyStatuses(signal?: AbortSignal): Promise<MyStatus[]> {
  const [owned, roles] = await Promise.all([
    api<StatusListEntry[]>('GET', '/v1/user/status', { signal }),
    api<Subscription[]>('GET', '/v1/user/subscriptions', { signal }),
  ])
  return [
    ...owned.map((s) => ({
      statusId: s.statusId,
      name: s.name,
      relation: 'owned' as const,
      role: 'owner' as const,
    })),
    ...roles.map((s) => ({
      statusId: s.statusId,
      name: s.name,
      relation: s.role === 'updater' ? ('shared' as const) : ('followed' as const),
      role: s.role,
    })),
  ]
}

/** My role on a status I have read: the owner alone reads its key; else my role, if any. */
export async function roleOn(status: Status): Promise<Role> {
  if (status.statusKey !== null) return 'owner'
  const roles = await api<Subscription[]>('GET', '/v1/user/subscriptions')
  return roles.find((s) => s.statusId === status.id)?.role ?? 'viewer'
}

/** Who may set the value: the owner and updaters (docs/api.md#who-may-see-and-change-a-status). */
export const maySetValue = (role: Role): boolean => role === 'owner' || role === 'updater'
