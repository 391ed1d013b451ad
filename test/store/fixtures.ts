import type { NewApiKey, NewStatusRow, NewUser } from '../../src/db/database.ts'
import { newId, newShareId } from '../../src/lib/ids.ts'

/** Rows for store contract suites: valid by default, any column overridable. */
export const userRow = (over: Partial<NewUser> = {}): NewUser => ({
  id: newId(),
  name: 'A user',
  email: null,
  plan: 'free',
  verified: 1,
  created_at: new Date().toISOString(),
  password_hash: null,
  email_verified_at: null,
  admin: 0,
  disabled_at: null,
  locale: null,
  ...over,
  // the folded address, as the users service stores it
  email_key: over.email_key ?? over.email?.toLowerCase() ?? null,
})

export const keyRow = (userId: string, over: Partial<NewApiKey> = {}): NewApiKey => ({
  id: newId(),
  user_id: userId,
  prefix: 'sdk_abcdefgh',
  key_hash: newId() + newId(),
  label: null,
  created_at: new Date().toISOString(),
  expires_at: null,
  revoked_at: null,
  replaced_by: null,
  scopes: null,
  status_ids: null,
  ...over,
})

export const statusRow = (ownerId: string, over: Partial<NewStatusRow> = {}): NewStatusRow => {
  const now = new Date().toISOString()
  return {
    id: newId(),
    share_id: newShareId(),
    owner_id: ownerId,
    status_key: null,
    name: 'A status',
    type: 'text',
    value: 'ON',
    access_type: 'private',
    description: '',
    color_no: 1,
    access_type_user_list: 'owner',
    access_type_history: 'private',
    change_count: 1,
    created_at: now,
    updated_at: now,
    value_updated_at: now,
    version: 1,
    value_until: null,
    value_after: null,
    value_until_by: null,
    listed: 0,
    name_search: null,
    palette: null,
    stale_after: null,
    stale_at: null,
    stale_notified_at: null,
    ...over,
  }
}
