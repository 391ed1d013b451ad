import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import path from 'node:path'
import { describe, it, mock } from 'node:test'
import { makeApp } from '../helpers/app.ts'
import { ROOT } from '../helpers/processes.ts'

// OWASP API7:2023 Server Side Request Forgery. statusd calls a URL a user gives in one place
// only: webhook deliveries, through the guarded client of src/lib/outbound.ts (its rules are
// proven in test/notifications/outbound.test.ts). Nothing else is fetched: no avatar or link
// previews, no imports by URL; a description's links are stored and shown as text, never
// followed. Proven twice: no outbound client in src/ but that file, and no outbound call
// while the API handles URLs.

const OUTBOUND =
  /\bfetch\(|\bhttps?\.(request|get)\(|\bnet\.(connect|createConnection)\(|\bdns\.|\bundici\b|\baxios\b|\bgot\(/

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? sourceFiles(path.join(dir, e.name))
        : e.name.endsWith('.ts')
          ? [path.join(dir, e.name)]
          : [],
    )
}

describe('no request on a client’s behalf', () => {
  it('src/ has no outbound HTTP, socket or DNS client but the guarded one', () => {
    const guarded = path.join(ROOT, 'src', 'lib', 'outbound.ts')
    assert.match(fs.readFileSync(guarded, 'utf8'), OUTBOUND, 'the guarded client is found')
    // note: the client commands (docs/cli.md) call the server their user logged in to, from
    // the user's own shell; the server never runs them (src/cli/main.ts loads the server only
    // for serve), so what they fetch is no request on a client's behalf
    const clientCommands = [path.join(ROOT, 'src', 'cli', 'client.ts')]
    const serverSide = sourceFiles(path.join(ROOT, 'src')).filter(
      (f) => f !== guarded && !clientCommands.includes(f),
    )
    for (const file of serverSide)
      assert.doesNotMatch(fs.readFileSync(file, 'utf8'), OUTBOUND, path.relative(ROOT, file))
  })

  it('URLs in every field a client sends (internal addresses included): stored as text, nothing is fetched', async (ctx) => {
    const calls: string[] = []
    const spies = [
      mock.method(globalThis, 'fetch', async (...args: unknown[]) => {
        calls.push(`fetch ${String(args[0])}`)
        throw new Error('no outbound calls')
      }),
      mock.method(http, 'request', () => {
        calls.push('http.request')
        throw new Error('no outbound calls')
      }),
      mock.method(https, 'request', () => {
        calls.push('https.request')
        throw new Error('no outbound calls')
      }),
      mock.method(net, 'connect', () => {
        calls.push('net.connect')
        throw new Error('no outbound calls')
      }),
    ]
    const t = await makeApp(ctx)
    ctx.after(() => {
      for (const spy of spies) spy.mock.restore()
    })
    const owner = await t.user() // the unlimited plan allows links
    const urls = [
      'http://169.254.169.254/latest/meta-data/',
      'http://127.0.0.1:22/',
      'file:///etc/passwd',
      'gopher://localhost:25/',
      'http://[::1]/',
    ]
    const res = await t.request(owner, 'POST', '/v1/status-keys/ssrf', {
      value: 'ON',
      description: urls.join(' '),
    })
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().description, urls.join(' '), 'stored as sent')
    await t.request(owner, 'PATCH', `/v1/status/${res.json().id}`, { name: 'http://10.0.0.1/x' })
    await t.request(owner, 'POST', '/v1/user/api-keys', { label: 'http://127.0.0.1:8080/' })
    await t.request(owner, 'GET', `/v1/status/${res.json().id}`, undefined, {
      'x-forwarded-host': '169.254.169.254',
      referer: 'http://127.0.0.1/',
    })
    assert.deepEqual(calls, [])
  })
})
