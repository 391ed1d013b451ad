import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, it } from 'node:test'
import { asLogLine, type Json, startServer } from '../helpers/processes.ts'

// README "Quick start" and "The three operations, with curl", over a real socket against the real
// `statusd serve` process (docs/operations.md#first-start: the first start prints an API key once).

let dir: string
let dbFile: string

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'statusd-e2e-readme-'))
  dbFile = path.join(dir, 'statusd.db')
})

after(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

it('the first start prints a key once; the README curl calls work with it; a restart prints none', async (t) => {
  const server = await startServer(t, dbFile)
  let key: string
  assert.ok(server.firstKey, `the first start prints an API key\n${server.output()}`)
  key = server.firstKey
  const bannerLines = server.stdout.filter((line) => line.includes(key))
  assert.ok(bannerLines.length >= 1)
  for (const line of bannerLines)
    assert.equal(asLogLine(line), null, `the key is printed as text, not as a log line: ${line}`)

  const base = server.url
  // curl -X POST …/v1/status-keys/room-4 -H "service-api-key: $KEY" -H 'content-type: application/json' -d '…'
  const body = '{"name": "Meeting room 4", "value": "OCCUPIED", "colorNo": 2}'
  const post = () =>
    fetch(`${base}/v1/status-keys/room-4`, {
      method: 'POST',
      headers: { 'service-api-key': key, 'content-type': 'application/json' },
      body,
    })
  const created = await post()
  assert.equal(created.status, 201, 'creates it (201) the first time')
  const status = (await created.json()) as Json
  assert.equal(status.name, 'Meeting room 4')
  assert.equal(status.value, 'OCCUPIED')
  assert.equal(status.colorNo, 2)
  assert.equal(status.statusKey, 'room-4')
  const location = created.headers.get('location')
  assert.ok(location, 'a created status comes with a Location')
  const atLocation = await fetch(new URL(location, base), { headers: { 'service-api-key': key } })
  assert.equal(atLocation.status, 200, 'Location names the new status')
  assert.equal(((await atLocation.json()) as Json).id, status.id)

  const again = await post()
  assert.equal(again.status, 200, 'updates it (200) after')
  assert.equal(((await again.json()) as Json).changeCount, 2)

  // curl -s …/v1/user/status -H "service-api-key: $KEY"
  const list = await fetch(`${base}/v1/user/status`, { headers: { 'service-api-key': key } })
  assert.equal(list.status, 200)
  const entries = (await list.json()) as Json
  assert.deepEqual(entries, [
    { statusId: status.id, statusKey: 'room-4', shareId: status.shareId, name: 'Meeting room 4' },
  ])

  // ID=$(… | node -p '…[0].statusId'); curl -X PATCH …/v1/status/$ID -d '{"value": "FREE"}'
  const id: string = (entries as Json)[0].statusId
  const patched = await fetch(`${base}/v1/status/${id}`, {
    method: 'PATCH',
    headers: { 'service-api-key': key, 'content-type': 'application/json' },
    body: '{"value": "FREE"}',
  })
  assert.equal(patched.status, 200)
  const updated = (await patched.json()) as Json
  assert.equal(updated.value, 'FREE')
  assert.equal(updated.name, 'Meeting room 4', 'only the properties sent change')
  assert.equal(updated.colorNo, 2)
  assert.equal(updated.changeCount, 3)

  // "`Authorization: Bearer $KEY` works in place of the `service-api-key` header."
  const bearer = await fetch(`${base}/v1/status/${id}`, {
    headers: { authorization: `Bearer ${key}` },
  })
  assert.equal(bearer.status, 200)
  assert.equal(((await bearer.json()) as Json).value, 'FREE')

  // echo FREE | curl -s -T- …/v1/status-keys/room-4/value -H "service-api-key: $KEY"
  // (curl sends stdin chunked, without a Content-Type: so does a stream body here)
  const plain = await fetch(`${base}/v1/status-keys/room-4/value`, {
    method: 'PUT',
    headers: { 'service-api-key': key },
    body: new Blob(['FREE\n']).stream(),
    duplex: 'half',
  } as RequestInit)
  assert.equal(plain.status, 200, await plain.clone().text())
  const typed = (await plain.json()) as Json
  assert.equal(typed.value, 'FREE')
  assert.equal(typed.changeCount, 4, 'the one-liner set the value')

  const exit = await server.stop('SIGTERM')
  assert.equal(exit.code, 0, server.output())

  const second = await startServer(t, dbFile)
  assert.equal(second.firstKey, null, 'a second start on the same database prints no key')
  assert.ok(
    !second.stdout.some((line) => /sdk_[A-Za-z0-9]{40}/.test(line)),
    `no key-shaped string on a second start\n${second.output()}`,
  )
  const check = await fetch(`${second.url}/v1/checkAuth`, { headers: { 'service-api-key': key } })
  assert.equal(check.status, 200, 'the first key still works after a restart')
  const who = (await check.json()) as Json
  assert.equal(who.authLevel, 'verified', 'the first user is verified')
  assert.equal(who.plan, 'pro', 'the first user is on the most capable plan')
  assert.equal((await second.stop('SIGTERM')).code, 0)
})
