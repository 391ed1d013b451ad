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
  ...over,
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
    ...over,
  }
}
