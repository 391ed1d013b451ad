// Lighthouse over statusd's pages (docs/performance.md#pages-lighthouse): starts a statusd of
// its own on an empty SQLite database, makes what the pages show (a public status, a public
// board of six, the first start's setup link), and runs Lighthouse on each page with the mobile
// preset (and the wall also with the desktop one), printing one row per page.
//
//   CHROME_PATH=/usr/bin/chromium node scripts/lighthouse-pages.ts
//   LIGHTHOUSE_LANG=de CHROME_PATH=/usr/bin/chromium node scripts/lighthouse-pages.ts
//
// Lighthouse is not a dependency of statusd: `LIGHTHOUSE` names its command (default
// `npx --yes lighthouse@12`, which fetches it once, without any browser). It drives the
// Chromium at CHROME_PATH.
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '..')
const lighthouse = (process.env.LIGHTHOUSE ?? 'npx --yes lighthouse@12').split(' ')

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(),
      )
    })
  })

const dir = mkdtempSync(path.join(tmpdir(), 'statusd-lighthouse-'))
const port = await freePort()
const base = `http://localhost:${port}`
const server = spawn(process.execPath, ['bin/statusd.js', 'serve', '--json'], {
  cwd: root,
  env: {
    ...process.env,
    PORT: String(port),
    PUBLIC_URL: base,
    DATABASE_URL: `sqlite:${path.join(dir, 'statusd.db')}`,
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
})
const cleanUp = () => {
  server.kill()
  rmSync(dir, { recursive: true, force: true })
}
process.on('exit', cleanUp)

const first = await new Promise<{ key: string; setupUrl: string }>((resolve, reject) => {
  server.on('exit', (code) => reject(new Error(`statusd exited (${code})`)))
  createInterface({ input: server.stdout }).on('line', (line) => {
    if (!line.startsWith('{"firstStart"')) return
    resolve(JSON.parse(line).firstStart)
  })
})
// the server listens once the first start is printed; ask until it answers
for (;;) {
  const ok = await fetch(`${base}/healthz`).then(
    (r) => r.ok,
    () => false,
  )
  if (ok) break
  await new Promise((r) => setTimeout(r, 100))
}

async function call<T>(method: string, url: string, body?: unknown): Promise<T> {
  const res = await fetch(base + url, {
    method,
    headers: { 'service-api-key': first.key, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`)
  return (await res.json()) as T
}

const VALUES = ['FREE', 'OCCUPIED', 'AWAY', 'BUSY', '42', 'ON AIR']
const statuses: { id: string; shareId: string }[] = []
for (const [i, value] of VALUES.entries())
  statuses.push(
    await call('POST', `/v1/status-keys/room-${i + 1}`, {
      name: `Meeting room ${i + 1}`,
      value,
      colorNo: (i % 12) + 1,
      accessType: 'public',
      description: 'The big room on the second floor, next to the kitchen.',
    }),
  )
const board = await call<{ shareId: string }>('POST', '/v1/boards', {
  name: 'Second floor',
  statusIds: statuses.map((s) => s.id),
  accessType: 'public',
})

// a session for the app's board: the first user gets a password, then signs in
const PASSWORD = 'lighthouse measuring run 1'
await call('PATCH', '/v1/user', { password: PASSWORD, email: 'admin@example.com' })
const login = await fetch(`${base}/v1/auth/login`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', origin: base },
  body: JSON.stringify({ email: 'admin@example.com', password: PASSWORD }),
})
const session = /statusd_session=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')?.[1]
if (!session) throw new Error(`sign-in failed: ${login.status}`)

const PAGES: { name: string; url: string; preset?: 'desktop'; cookie?: string }[] = [
  { name: 'app `/` (signed out: sign-in)', url: `${base}/` },
  { name: 'app `/` (signed in: the board)', url: `${base}/`, cookie: session },
  { name: 'share page `/s/…`', url: `${base}/s/${statuses[0]?.shareId}` },
  { name: 'wall `/b/…` (mobile)', url: `${base}/b/${board.shareId}` },
  { name: 'wall `/b/…` (desktop)', url: `${base}/b/${board.shareId}`, preset: 'desktop' },
  { name: 'API reference `/docs`', url: `${base}/docs` },
  { name: 'setup page `/setup/…` (the first start)', url: first.setupUrl },
]

const score = (v: number | null | undefined) => (v == null ? '–' : String(Math.round(v * 100)))
console.log('| page | performance | accessibility | best practices | SEO | CLS | TBT | LCP |')
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |')
// LIGHTHOUSE_LANG=de: the pages as a browser set to that language sees them (docs/languages.md)
const lang = process.env.LIGHTHOUSE_LANG
const headers = (page: { cookie?: string }): Record<string, string> => ({
  ...(page.cookie && { cookie: `statusd_session=${page.cookie}` }),
  ...(lang && { 'accept-language': lang }),
})
// `node scripts/lighthouse-pages.ts wall`: only the pages whose name has that word
const only = process.argv[2]
for (const page of PAGES.filter((p) => !only || p.name.includes(only))) {
  // LIGHTHOUSE_REPORTS=<dir> keeps each page's whole report there
  const keep = process.env.LIGHTHOUSE_REPORTS
  const out = keep
    ? path.join(keep, `${page.name.replace(/[^a-z0-9]+/gi, '-')}.json`)
    : path.join(dir, 'report.json')
  const [command, ...args] = lighthouse as [string, ...string[]]
  await run(
    command,
    [
      ...args,
      page.url,
      '--quiet',
      '--output=json',
      `--output-path=${out}`,
      `--chrome-flags=--headless --no-sandbox${lang ? ` --lang=${lang}` : ''}`,
      ...(page.preset ? [`--preset=${page.preset}`] : []),
      ...(Object.keys(headers(page)).length > 0
        ? [`--extra-headers=${JSON.stringify(headers(page))}`]
        : []),
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  )
  const report = JSON.parse(readFileSync(out, 'utf8'))
  const c = report.categories
  const a = report.audits
  console.log(
    `| ${page.name} | ${score(c.performance.score)} | ${score(c.accessibility.score)} | ${score(c['best-practices'].score)} | ${score(c.seo.score)} | ${a['cumulative-layout-shift'].numericValue.toFixed(3)} | ${Math.round(a['total-blocking-time'].numericValue)} ms | ${(a['largest-contentful-paint'].numericValue / 1000).toFixed(1)} s |`,
  )
}
cleanUp()
process.exit(0)
