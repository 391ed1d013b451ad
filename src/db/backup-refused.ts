/** A backup or a restore that cannot happen: the operator gets the message as it is. */
export class BackupRefused extends Error {
  override name = 'BackupRefused'
}
