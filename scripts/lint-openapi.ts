// `npm run lint:openapi` (part of `npm run lint`, so of CI): the OpenAPI document GET
// /openapi.json serves, linted by Redocly's recommended rules as redocly.yaml adjusts them.
// Any error or warning fails it (Redocly itself fails on errors only), so the document stays
// as clean for the next client generator as it is for openapi-typescript (docs/api.md#openapi).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.ts'
import { createDatabase } from '../src/db/create-database.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { DEFAULT_PLANS } from '../src/modules/plans/plans.ts'

const root = new URL('..', import.meta.url).pathname
const database = createDatabase('sqlite::memory:')
await migrateToLatest(database.db)
const app = await buildApp({ database, plans: DEFAULT_PLANS })
const response = await app.inject({ url: '/openapi.json' })
await app.close()
if (response.statusCode !== 200) throw new Error(`GET /openapi.json: ${response.statusCode}`)

const dir = mkdtempSync(join(tmpdir(), 'statusd-openapi-'))
try {
  const file = join(dir, 'openapi.json')
  writeFileSync(file, response.body)
  const lint = spawnSync(
    join(root, 'node_modules/.bin/redocly'),
    ['lint', '--config', join(root, 'redocly.yaml'), '--format=json', file],
    {
      encoding: 'utf8',
      // no network: no usage reports, no look-up of a newer version
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  )
  interface Problem {
    ruleId: string
    severity: string
    message: string
    location: { pointer?: string }[]
  }
  let report: { totals: { errors: number; warnings: number }; problems: Problem[] }
  try {
    report = JSON.parse(lint.stdout)
  } catch {
    throw new Error(
      `redocly lint gave no report (exit ${lint.status}):\n${lint.stdout}${lint.stderr}`,
    )
  }
  for (const p of report.problems)
    process.stderr.write(`${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}\n`)
  const { errors, warnings } = report.totals
  if (errors + warnings > 0) {
    process.stderr.write(`lint:openapi: ${errors} errors, ${warnings} warnings\n`)
    process.exitCode = 1
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
