import { createReadStream } from 'node:fs'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { ERROR_RESPONSES } from '../../lib/error-schema.ts'
import { conflict, notFound } from '../../lib/errors.ts'
import { recordSecurityEvent } from '../audit/security-events.ts'
import { BackupListSchema, BackupSchema } from './backups.schemas.ts'
import {
  type BackupEntry,
  BackupRefused,
  type Backups,
  backUpNow,
  backupPath,
  backupsInFolder,
} from './backups.service.ts'

export interface BackupRoutesOptions {
  /** Where backups go and how they are taken; null: BACKUP_DIR is not set. */
  backups: Backups | null
  /** BACKUP_EVERY as the operator wrote it, and BACKUP_KEEP. */
  every: string | null
  keep: number | null
}

const view = ({ name, bytes, manifest }: BackupEntry) => ({
  name,
  bytes,
  createdAt: manifest.createdAt,
  statusd: manifest.statusd,
  schemaVersion: manifest.schemaVersion,
  engine: manifest.engine,
  sha256: manifest.data.sha256,
})

const tags = ['admin']
// operators only: an admin's session, or a key with the scope admin
const config = { scope: 'admin', admin: true } as const

const NameParamsSchema = Type.Object({ name: Type.String({ maxLength: 200 }) })

/** The backups of BACKUP_DIR (docs/api.md#backups): list, download, take one now. */
export const backupRoutes: FastifyPluginAsyncTypebox<BackupRoutesOptions> = async (
  app,
  { backups, every, keep },
) => {
  app.get(
    '/v1/admin/backups',
    {
      config,
      schema: {
        operationId: 'listBackups',
        summary: 'List the backups in BACKUP_DIR, newest first, and the schedule',
        description:
          'Operators only. Without BACKUP_DIR, `enabled` is false and the list is empty. A file in the folder that is not a backup is left out.',
        tags,
        response: { 200: BackupListSchema, ...ERROR_RESPONSES },
      },
    },
    async () => ({
      enabled: backups !== null,
      every,
      keep,
      backups: backups === null ? [] : (await backupsInFolder(backups)).map(view),
    }),
  )

  app.get(
    '/v1/admin/backups/:name',
    {
      config,
      schema: {
        operationId: 'downloadBackup',
        summary: 'Download one backup (a tar: manifest.json, then the data)',
        description:
          'Operators only. 404 for a name that is not a backup in BACKUP_DIR. Restore it with `statusd restore FILE` (docs/operations.md#restore).',
        tags,
        params: NameParamsSchema,
        response: {
          200: {
            description: 'The backup file',
            content: { 'application/x-tar': { schema: Type.String() } },
          },
          ...ERROR_RESPONSES,
        },
      },
    },
    async (request, reply) => {
      const path = backups && (await backupPath(backups, request.params.name))
      if (!path) throw notFound('No backup has this name')
      await recordSecurityEvent(app.database.db, {
        kind: 'admin.backupDownloaded',
        userId: null,
        actorId: request.caller.userId,
        ip: request.ip,
        userAgent: request.headers['user-agent'],
        detail: { backup: request.params.name },
      })
      // note: the file streams as it is; the route's typed replies know JSON bodies only
      return (reply as FastifyReply)
        .type('application/x-tar')
        .header('content-disposition', `attachment; filename="${request.params.name}"`)
        .send(createReadStream(path))
    },
  )

  app.post(
    '/v1/admin/backups',
    {
      config: { ...config, bodyOptional: true, located: true },
      schema: {
        operationId: 'takeBackup',
        summary: 'Take a backup now, into BACKUP_DIR',
        description:
          'Operators only. Answers once the backup is complete. 409 without BACKUP_DIR, or when the database cannot be backed up here (PostgreSQL without pg_dump: docs/postgres.md#backups).',
        tags,
        response: { 201: BackupSchema, ...ERROR_RESPONSES },
      },
    },
    async (request, reply) => {
      if (backups === null)
        throw conflict(
          'Backups are off: set BACKUP_DIR to take them (docs/operations.md#backup-and-restore)',
        )
      let entry: BackupEntry
      try {
        entry = await backUpNow(backups)
      } catch (err) {
        if (err instanceof BackupRefused) throw conflict(err.message)
        throw err
      }
      await recordSecurityEvent(app.database.db, {
        kind: 'admin.backupTaken',
        userId: null,
        actorId: request.caller.userId,
        ip: request.ip,
        userAgent: request.headers['user-agent'],
        detail: { backup: entry.name },
      })
      return reply.code(201).header('location', `/v1/admin/backups/${entry.name}`).send(view(entry))
    },
  )
}
