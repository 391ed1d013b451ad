// The rig's public reads (bench/run.ts): the anonymous views a README, a dashboard or a
// status page asks for again and again. Each round makes a few of the seeded statuses public
// (history and people public too, so the page shows them) through the API, then wrk GETs
// their views without a key, rotating over them. A few rather than one: a hot page or README
// usually shows several badges, and every view stays hot, which is the case measured (the
// answer a cache in front of statusd would revalidate, or a browser would reload).
import { readFileSync, writeFileSync } from 'node:fs'

/** How many public statuses the read targets rotate over. */
export const READ_STATUSES = 10

export interface ReadTarget {
  name: string
  label: string
  /** The path of a status's view, by its share id. */
  path(shareId: string): string
  /** With `If-None-Match` naming the current ETag: the revalidation path (304). */
  revalidate: boolean
}

const reads: [string, string, (shareId: string) => string][] = [
  ['badge', 'badge SVG', (id) => `/s/${id}/badge.svg`],
  ['share-json', 'share view JSON', (id) => `/v1/share/${id}`],
  ['share-page', 'share page HTML', (id) => `/s/${id}`],
]

/** badge, share-json, share-page (the 200 path); badge-304, … (the same with a current ETag). */
export const READ_TARGETS: ReadTarget[] = [false, true].flatMap((revalidate) =>
  reads.map(([name, what, path]) => ({
    name: revalidate ? `${name}-304` : name,
    label: `statusd GET ${what}${revalidate ? ', If-None-Match (304)' : ''} (SQLite)`,
    path,
    revalidate,
  })),
)

/**
 * Makes the first READ_STATUSES seeded statuses public on the server at `port` and writes
 * the request lines for wrk (bench/wrk/statusd.lua, mode `public`) to `file`.
 */
export async function publicReadTargets(
  target: ReadTarget,
  port: number,
  data: { key: string; idsFile: string },
  file: string,
): Promise<string> {
  const base = `http://127.0.0.1:${port}`
  const ids = readFileSync(data.idsFile, 'utf8').split('\n').filter(Boolean).slice(0, READ_STATUSES)
  const lines: string[] = []
  for (const id of ids) {
    const res = await fetch(`${base}/v1/status/${id}`, {
      method: 'PATCH',
      headers: { 'service-api-key': data.key, 'content-type': 'application/json' },
      body: JSON.stringify({
        accessType: 'public',
        accessTypeHistory: 'public',
        accessTypeUserList: 'public',
      }),
    })
    if (!res.ok) throw new Error(`bench: making ${id} public: ${res.status} ${await res.text()}`)
    const { shareId } = (await res.json()) as { shareId: string }
    const path = target.path(shareId)
    const view = await fetch(`${base}${path}`)
    await view.arrayBuffer()
    const etag = view.headers.get('etag')
    if (view.status !== 200 || !etag) throw new Error(`bench: ${path}: ${view.status}, no ETag`)
    lines.push(target.revalidate ? `${path}\t${etag}` : path)
  }
  writeFileSync(file, `${lines.join('\n')}\n`)
  return file
}
