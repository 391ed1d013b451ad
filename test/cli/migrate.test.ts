import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { main } from '../../src/cli/main.ts'
import { migrations } from '../../src/db/migrations/index.ts'

test('SPEC §8 statusd migrate applies the pending migrations, then reports none pending', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-migrate-'))
  const saved = process.env.DATABASE_URL
  process.env.DATABASE_URL = `sqlite:${path.join(dir, 'statusd.db')}`
  try {
    const runJson = async () => {
      let out = ''
      const code = await main(['migrate', '--json'], (t) => {
        out += t
      })
      assert.equal(code, 0)
      return JSON.parse(out)
    }
    assert.deepEqual((await runJson()).applied, Object.keys(migrations))
    assert.deepEqual((await runJson()).applied, [])
  } finally {
    if (saved === undefined) delete process.env.DATABASE_URL
    else process.env.DATABASE_URL = saved
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
