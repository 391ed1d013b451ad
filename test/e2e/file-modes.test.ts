import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { it } from 'node:test'
import { tempDir } from '../helpers/cleanup.ts'
import { startServer } from '../helpers/processes.ts'

// Files world-readable (hardening finding 11): `npm start` created ./data 0755 and the database
// 0644. What statusd creates is private to its user (docs/operations.md#storage-sqlite): the
// directories 0700, the database and its -wal and -shm files 0600; what exists already keeps
// the mode its operator gave it.

const noModes = process.platform === 'win32' ? 'no POSIX file modes on this platform' : false
const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8).padStart(4, '0')

it('files world-readable: a start on a fresh path creates its directories 0700 and the database, -wal and -shm 0600', {
  skip: noModes,
}, async (t) => {
  const root = tempDir(t)
  const data = path.join(root, 'data', 'nested')
  const file = path.join(data, 'statusd.db')
  const server = await startServer(t, file)
  // while it runs, with the log and shared-memory files open
  for (const created of [file, `${file}-wal`, `${file}-shm`])
    assert.equal(modeOf(created), '0600', `${path.basename(created)} is private`)
  assert.equal(modeOf(data), '0700', 'the directory it created')
  assert.equal(modeOf(path.dirname(data)), '0700', 'and its parent, created with it')
  assert.equal((await server.stop()).code, 0, server.output())
  assert.equal(modeOf(file), '0600', 'the database after a clean stop')
})

it('files world-readable: a directory that exists keeps its mode (the operator chose it)', {
  skip: noModes,
}, async (t) => {
  const data = path.join(tempDir(t), 'data')
  fs.mkdirSync(data, { mode: 0o750 })
  fs.chmodSync(data, 0o750)
  const file = path.join(data, 'statusd.db')
  const server = await startServer(t, file)
  assert.equal(modeOf(data), '0750')
  assert.equal(modeOf(file), '0600', 'the database it created is private all the same')
  assert.equal((await server.stop()).code, 0, server.output())
})
