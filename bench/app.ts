// App bench (docs/performance.md#the-app): a board of 100 statuses open in Chromium while
// PATCHes arrive through the API, and the app's first-load size.
//   node bench/app.ts [--statuses 100] [--patches 300] [--no-write]
//
// Method. statusd runs as its own process (`statusd serve`, SQLite, SIGNUP=open). One person
// signs up and makes `--statuses` statuses through the API; headless Chromium opens the
// board signed in as them and waits until every tile shows its value. Then, one at a time,
// the page itself sends `--patches` PATCHes with fetch (so the start and the end are read on
// the same clock, the page's performance.now()), each to a random status with a new value,
// and a MutationObserver on the tiles records when that tile shows it. The figure is the
// time from the PATCH's answer to the tile's change: the SSE event goes out when the write
// commits, so it may even come first (0 ms). The page's own PATCH does not touch the tile:
// only the event stream does (the app's buttons would also show the answer at once).
// First load: the gzipped size of the JS and CSS the page loads before any lazy chunk (from
// the build: dist/app/build.json), and the bytes Chromium fetched for the board.
//
// note: browser, server and bench share the machine; on 2 cores the figures are upper bounds.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { chromium } from 'playwright-core'
import { buildApp } from '../scripts/build-app.ts'
import { type AppResult, runInfo, writeResult } from './results.ts'
import { startServer, statusdCommand, stopServer } from './rig.ts'

const ROOT = new URL('..', import.meta.url).pathname
const { values } = parseArgs({
  options: {
    statuses: { type: 'string', default: '100' },
    patches: { type: 'string', default: '300' },
    'no-write': { type: 'boolean', default: false },
  },
})
const STATUSES = Number(values.statuses)
const PATCHES = Number(values.patches)

// first load, from the build
await buildApp()
const distDir = join(ROOT, 'dist/app')
const build = JSON.parse(readFileSync(join(distDir, 'build.json'), 'utf8')) as {
  js: string
  css: string | null
  preload: string[]
}
const gzKb = (file: string) =>
  gzipSync(readFileSync(join(distDir, file)), { level: 9 }).length / 1024
const firstLoadJsKb = [build.js, ...build.preload].reduce((sum, f) => sum + gzKb(f), 0)
const firstLoadCssKb = build.css ? gzKb(build.css) : 0

const dir = mkdtempSync(join(tmpdir(), 'statusd-bench-app-'))
const port = 20_000 + Math.floor(Math.random() * 20_000)
const origin = `http://localhost:${port}`
const command = statusdCommand(port, `sqlite:${join(dir, 'statusd.db')}`)
command.env.SIGNUP = 'open'
command.env.PUBLIC_URL = origin
command.env.ANON_REQUESTS_PER_MINUTE = '100000000'
const server = await startServer('statusd', port, command)
const profile = mkdtempSync(join(tmpdir(), 'statusd-bench-chromium-'))
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  viewport: { width: 1280, height: 900 },
})

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
const round = (ms: number) => Math.round(ms * 10) / 10

try {
  const base = `http://127.0.0.1:${port}`
  const signup = await fetch(`${base}/v1/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({
      email: 'bench@example.com',
      name: 'Bench',
      password: 'bench passphrase 2026',
    }),
  })
  if (signup.status !== 201) throw new Error(`sign-up answered ${signup.status}`)
  const cookie = (signup.headers.getSetCookie()[0] ?? '').split(';')[0] as string
  for (let i = 0; i < STATUSES; i++) {
    const res = await fetch(`${base}/v1/status-keys/s${i}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, cookie },
      body: JSON.stringify({ name: `Status ${i}`, value: `V${i}` }),
    })
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`)
  }
  await context.addCookies([
    { name: 'statusd_session', value: cookie.slice('statusd_session='.length), url: origin },
  ])
  const page = context.pages()[0] ?? (await context.newPage())
  let transferred = 0
  const cdp = await context.newCDPSession(page)
  await cdp.send('Network.enable')
  cdp.on('Network.loadingFinished', (event) => {
    transferred += event.encodedDataLength
  })
  await page.goto(`${origin}/`)
  // a tile shows its value chip once its status came on the stream: the last chip is all of them
  await page
    .locator('li.board-tile .value-chip')
    .nth(STATUSES - 1)
    .waitFor({ timeout: 60_000 })
  const transferredKb = transferred / 1024
  await cdp.detach()

  const result = (await page.evaluate(`(async () => {
    const tiles = [...document.querySelectorAll('li.board-tile')]
    const ids = tiles.map((t) => t.dataset.statusId)
    const seen = new Map()
    const observer = new MutationObserver(() => {
      const at = performance.now()
      for (const tile of tiles) {
        const text = tile.querySelector('.value-chip')?.textContent
        const key = tile.dataset.statusId + ' ' + text
        if (!seen.has(key)) seen.set(key, at)
      }
    })
    observer.observe(document.querySelector('ul.board-tiles'), { subtree: true, childList: true, characterData: true })
    const waitFor = (key) => new Promise((resolve) => {
      const started = performance.now()
      const check = () => {
        if (seen.has(key)) return resolve(seen.get(key))
        if (performance.now() - started > 5000) return resolve(null)
        setTimeout(check, 1)
      }
      check()
    })
    const latencies = []
    const trips = []
    let missed = 0
    for (let n = 0; n < ${PATCHES}; n++) {
      const id = ids[Math.floor(Math.random() * ids.length)]
      const value = 'P' + n
      const started = performance.now()
      const res = await fetch('/v1/status/' + encodeURIComponent(id), {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value }),
      })
      await res.json()
      const answered = performance.now()
      if (!res.ok) throw new Error('PATCH answered ' + res.status)
      const shown = await waitFor(id + ' ' + value)
      if (shown === null) missed++
      else {
        latencies.push(Math.max(0, shown - answered))
        trips.push(shown - started)
      }
    }
    observer.disconnect()
    return { latencies, trips, missed }
  })()`)) as { latencies: number[]; trips: number[]; missed: number }

  const sorted = [...result.latencies].sort((a, b) => a - b)
  const trips = [...result.trips].sort((a, b) => a - b)
  const figures = {
    liveP50Ms: round(quantile(sorted, 0.5)),
    liveP99Ms: round(quantile(sorted, 0.99)),
    liveMaxMs: round(sorted.at(-1) ?? Number.NaN),
    roundTripP50Ms: round(quantile(trips, 0.5)),
    roundTripP99Ms: round(quantile(trips, 0.99)),
    missed: result.missed,
    firstLoadJsKb: round(firstLoadJsKb),
    firstLoadCssKb: round(firstLoadCssKb),
    transferredKb: round(transferredKb),
  }
  console.log(JSON.stringify(figures, null, 2))
  if (!values['no-write']) {
    const run: AppResult = {
      ...runInfo(
        ROOT,
        `npm run bench:app -- --statuses ${STATUSES} --patches ${PATCHES}`,
        'statusd serve (SQLite) and headless Chromium on one host; the board of N statuses open; PATCHes sent one at a time from the page with fetch; a MutationObserver times each tile change against the PATCH answer on the page clock. First load: gzip -9 of the entry JS with its preloaded chunks and of its CSS (dist/app/build.json); transferred: encoded bytes Chromium fetched until every tile showed its value.',
      ),
      kind: 'app',
      params: { statuses: STATUSES, patches: PATCHES },
      ...figures,
    }
    writeResult(run)
  }
} finally {
  await context.close()
  rmSync(profile, { recursive: true, force: true })
  await stopServer(server)
  rmSync(dir, { recursive: true, force: true })
}
