/**
 * The kinds the services record (docs/security.md#security-log); operators' own actions are
 * recorded as `admin.…` beside them. Imported by the app too: nothing else here.
 */
export const SECURITY_EVENT_KINDS = [
  'signIn',
  'signInFailed',
  'signOut',
  'sessionRevoked',
  'passwordChanged',
  'passwordReset',
  'emailChanged',
  'emailVerified',
  'keyCreated',
  'keyRotated',
  'keyRevoked',
  'keysRevokedAll',
  'passkeyAdded',
  'passkeyRemoved',
  'roleGranted',
  'roleChanged',
  'roleRemoved',
  'roleAccepted',
  'statusTransferOffered',
  'statusTransferred',
  'adminGranted',
  'adminRevoked',
  'accountDeleted',
] as const

export type SecurityEventKind = (typeof SECURITY_EVENT_KINDS)[number]
