import assert from 'node:assert/strict'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { build } from 'esbuild'
import { makeApp, type TestApp } from '../helpers/app.ts'
import { chromiumMissing, launchChromium } from '../helpers/browser.ts'
import { suiteLifetime } from '../helpers/cleanup.ts'
import { ROOT } from '../helpers/processes.ts'

// docs/client.md#in-a-browser: @statusd/client runs in a browser. Its sources, bundled by
// esbuild as the package build bundles them, are loaded by a page in Chromium; the page is
// served from the statusd's origin by a reverse proxy in front of it (the API answers no
// cross-origin requests), which passes everything else, event streams included, to a real
// statusd. The page lists, sets and watches one change.

const WAIT = { timeout: 30_000 }

/** What the page's scripts read and leave on the page's global object. */
interface PageGlobals {
  location: { origin: string }
  events: { id: number; value: string }[]
}

describe('@statusd/client in Chromium', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>
  let t: TestApp
  let origin: string
  const suite = suiteLifetime()
  before(async () => {
    const [bundle] = await Promise.all([
      build({
        entryPoints: [path.join(ROOT, 'packages/client/src/index.ts')],
        bundle: true,
        format: 'esm',
        platform: 'neutral',
        target: 'es2022',
        write: false,
      }),
      (async () => {
        browser = await launchChromium()
      })(),
    ])
    const script = bundle.outputFiles[0]?.text ?? ''
    t = await makeApp(suite, { deps: { sse: { retryMs: 20, heartbeatMs: 60_000 } } })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const upstream = (t.app.server.address() as AddressInfo).port
    const proxy = createServer((req, res) => {
      if (req.url === '/client-page') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        res.end('<!doctype html><title>client</title>')
      } else if (req.url === '/client.js') {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' })
        res.end(script)
      } else {
        const forward = request(
          {
            host: '127.0.0.1',
            port: upstream,
            method: req.method,
            path: req.url,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(res)
          },
        )
        forward.on('error', () => res.destroy())
        req.pipe(forward)
      }
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    suite.after(() => {
      proxy.closeAllConnections()
      return new Promise<void>((resolve) => proxy.close(() => resolve()))
    })
    origin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
  })
  after(async () => {
    await browser?.close()
  })

  it('the bundled client lists, sets and watches one change from a page', async (ctx) => {
    const owner = await t.user()
    await t.request(owner, 'POST', '/v1/status-keys/desk-1', { value: 'HOME' })
    const page = await browser.context.newPage()
    ctx.after(() => page.close())
    await page.goto(`${origin}/client-page`)
    const first = await page.evaluate(async (apiKey) => {
      const page = globalThis as unknown as PageGlobals
      const { StatusdClient } = await import(`${page.location.origin}/client.js`)
      const client = new StatusdClient({ url: page.location.origin, apiKey })
      const set = await client.set('room-4', { value: 'FREE', colorNo: 3 })
      const list = await client.list()
      const events: { id: number; value: string }[] = []
      page.events = events
      void (async () => {
        for await (const event of client.watch('room-4'))
          if (event.type === 'status') events.push({ id: event.id, value: event.status.value })
      })()
      return {
        set: [set.statusKey, set.value, set.changeCount],
        list: list.map((s: { statusKey: string }) => s.statusKey),
      }
    }, owner.key)
    assert.deepEqual(first, { set: ['room-4', 'FREE', 1], list: ['desk-1', 'room-4'] })
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobals).events.length === 1,
      null,
      WAIT,
    )
    await t.request(owner, 'POST', '/v1/status-keys/room-4', { value: 'BUSY' })
    await page.waitForFunction(
      () => (globalThis as unknown as PageGlobals).events.length === 2,
      null,
      WAIT,
    )
    const events = await page.evaluate(() => (globalThis as unknown as PageGlobals).events)
    assert.deepEqual(
      events.map((e) => e.value),
      ['FREE', 'BUSY'],
    )
    assert.ok((events[1]?.id ?? 0) > (events[0]?.id ?? 0))
  })
})
