// Export bench: how long `GET /v1/user/export` takes for a user with many statuses and a
// long history, and how much memory the server reaches meanwhile
// (docs/performance.md#export). Prints the figures and writes the run to bench/results/.
//   node bench/export.ts [--statuses 1000] [--history 1000]
//                        [--dir /tmp/statusd-export-bench] [--server-url postgres://…/postgres]
//                        [--heap-mb 40] [--no-write]
//
// Method. A dataset seeded by bench/seed.ts (one user owning --statuses statuses, with
// statuses × history history rows; reused from --dir when it has that shape), served by
// `statusd serve` as its own process (SQLite, or PostgreSQL with --server-url). The server's
// peak RSS (VmHWM) is read once it is up and a request was answered, then the user's export
// is fetched once with the seed's key and read as it arrives (counted, never kept), and the
// peak is read again. The document is parsed afterwards from a file, to check it holds every
// history row.
//
// --heap-mb caps the server's V8 heap (--max-old-space-size): an export that completes under
// a cap smaller than the document was not held whole.
//
// note: the client and the server share the machine; the time is an upper bound.
import { createWriteStream, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { type ExportResult, runInfo, writeResult } from './results.ts'
import { peakRssMb, startServer, statusdCommand, stopServer } from './rig.ts'
import { databaseOn, seedOrReuse } from './seed.ts'

const ROOT = new URL('..', import.meta.url).pathname
const { values } = parseArgs({
  options: {
    statuses: { type: 'string', default: '1000' },
    history: { type: 'string', default: '1000' },
    dir: { type: 'string', default: join(tmpdir(), 'statusd-export-bench') },
    'server-url': { type: 'string' },
    'heap-mb': { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
})
const statuses = Number(values.statuses)
const history = Number(values.history)
const serverUrl = values['server-url']
const engine = serverUrl ? 'postgres' : 'sqlite'
const round = (x: number) => Math.round(x * 100) / 100

const dir = join(values.dir, `${engine}-n${statuses}-h${history}`)
mkdirSync(dir, { recursive: true })
const data = await seedOrReuse(
  {
    dir,
    statuses,
    history,
    ...(serverUrl && {
      databaseUrl: databaseOn(serverUrl, `statusd_bench_export_${statuses}`),
      serverUrl,
    }),
  },
  'export',
)
const port = 20_000 + Math.floor(Math.random() * 20_000)
const heapMb = values['heap-mb'] === undefined ? null : Number(values['heap-mb'])
const command = statusdCommand(port, data.databaseUrl)
if (heapMb !== null) command.env.NODE_OPTIONS = `--max-old-space-size=${heapMb}`
const server = await startServer('statusd', port, command)
const base = `http://127.0.0.1:${port}`
const headers = { 'service-api-key': data.key }
const out = join(dir, 'export.json')
let row: ExportResult['row']
try {
  const pid = server.pid as number
  const profile = await fetch(`${base}/v1/user`, { headers })
  if (profile.status !== 200) throw new Error(`GET /v1/user answered ${profile.status}`)
  await profile.arrayBuffer()
  const rssBeforeMb = peakRssMb(pid)

  const start = performance.now()
  const res = await fetch(`${base}/v1/user/export`, { headers })
  if (res.status !== 200 || res.body === null)
    throw new Error(`the export answered ${res.status}: ${await res.text()}`)
  const firstByteMs = performance.now() - start
  let bytes = 0
  const body = Readable.fromWeb(res.body)
  body.on('data', (chunk: Buffer) => {
    bytes += chunk.length
  })
  await pipeline(body, createWriteStream(out))
  const seconds = (performance.now() - start) / 1000
  const rssPeakMb = peakRssMb(pid)

  const doc = JSON.parse(readFileSync(out, 'utf8')) as {
    statuses: { history: unknown[] }[]
  }
  const exportedHistory = doc.statuses.reduce((n, s) => n + s.history.length, 0)
  if (doc.statuses.length !== statuses || exportedHistory !== data.historyRows)
    throw new Error(
      `the export holds ${doc.statuses.length} statuses and ${exportedHistory} history rows, not ${statuses} and ${data.historyRows}`,
    )
  row = {
    statuses,
    historyRows: data.historyRows,
    bytes,
    firstByteMs: round(firstByteMs),
    seconds: round(seconds),
    mbPerS: round(bytes / 2 ** 20 / seconds),
    rssBeforeMb: round(rssBeforeMb),
    rssPeakMb: round(rssPeakMb),
  }
  console.error('export:', JSON.stringify(row))
} finally {
  await stopServer(server)
  rmSync(out, { force: true })
}

const result: ExportResult = {
  ...runInfo(
    ROOT,
    `npm run bench:export -- --statuses ${statuses} --history ${history}${heapMb === null ? '' : ` --heap-mb ${heapMb}`}${serverUrl ? ' --server-url …' : ''}`,
    `statusd serve (${engine}) on a seeded dataset: one user owning the statuses and every history row; GET /v1/user/export once with an API key, read as it arrives into a file; seconds until the last byte, the server's peak RSS (VmHWM) before and after; the file is then parsed to check it holds every status and history row`,
  ),
  kind: 'export',
  params: { engine, history, heapMb },
  row,
}
console.log(JSON.stringify(result, null, 2))
if (!values['no-write']) writeResult(result)
