import { Type } from 'typebox'
import { Timestamp } from '../../lib/schema.ts'

const EXAMPLE = {
  name: 'statusd-20261129-030000-4f2a9c.tar',
  bytes: 48312320,
  createdAt: '2026-11-29T03:00:00.112Z',
  statusd: '0.1.0',
  schemaVersion: '2026-11-30T000000-operators',
  engine: 'sqlite',
  sha256: '5b0d0c7f8e1a4b3c2d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c',
}

export const BackupSchema = Type.Object(
  {
    name: Type.String({ description: 'Its file name in BACKUP_DIR: how it is downloaded' }),
    bytes: Type.Integer({ minimum: 0, description: 'The size of the file (the tar)' }),
    createdAt: Timestamp({ description: 'When it was taken' }),
    statusd: Type.String({ description: 'The statusd version that took it' }),
    schemaVersion: Type.String({ description: 'The last migration its database had applied' }),
    engine: Type.String({ description: 'The engine it was taken from: sqlite or postgres' }),
    sha256: Type.String({ description: 'The sha256 of its data file, as its manifest says' }),
  },
  {
    $id: 'Backup',
    description: 'A backup in BACKUP_DIR (docs/operations.md#backup-and-restore)',
    examples: [EXAMPLE],
  },
)

export const BackupListSchema = Type.Object(
  {
    enabled: Type.Boolean({
      description: 'Whether BACKUP_DIR is set: without it, no backup is taken or listed here',
    }),
    every: Type.Union([Type.String(), Type.Null()], {
      description: 'BACKUP_EVERY, e.g. `24h`; null: no scheduled backups',
    }),
    keep: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: 'BACKUP_KEEP; null: every backup is kept',
    }),
    backups: Type.Array(BackupSchema, { description: 'Newest first' }),
  },
  {
    $id: 'BackupList',
    description: 'The backups in BACKUP_DIR and the schedule',
    examples: [{ enabled: true, every: '24h', keep: 7, backups: [EXAMPLE] }],
  },
)
