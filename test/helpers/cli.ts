import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before } from 'node:test'
import { main } from '../../src/cli/main.ts'

/**
 * Points the in-process CLI (loadConfig reads process.env) at a fresh temp SQLite file for the
 * file's tests, without PLANS_FILE, and puts the environment back afterwards.
 */
export function useCliDatabase(prefix: string): void {
  const saved = { DATABASE_URL: process.env.DATABASE_URL, PLANS_FILE: process.env.PLANS_FILE }
  let dir = ''
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
    process.env.DATABASE_URL = `sqlite:${path.join(dir, 'statusd.db')}`
    delete process.env.PLANS_FILE
  })
  after(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    fs.rmSync(dir, { recursive: true, force: true })
  })
}

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs `statusd …` in-process, exactly as bin/statusd.js does; captures both outputs. */
export async function run(...argv: string[]): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const code = await main(
    argv,
    (t) => {
      stdout += t
    },
    (t) => {
      stderr += t
    },
  )
  return { code, stdout, stderr }
}

/** Runs a command with --json that must succeed and write nothing to stderr; its parsed output. */
// biome-ignore lint/suspicious/noExplicitAny: parsed CLI output, every use is checked by an assertion
export async function json(...argv: string[]): Promise<any> {
  const r = await run(...argv, '--json')
  assert.equal(r.code, 0, `statusd ${argv.join(' ')} failed: ${r.stderr}`)
  assert.equal(r.stderr, '', 'a successful command writes nothing to stderr')
  return JSON.parse(r.stdout)
}
