// The chart of docs/performance.md (`npm run bench:chart`, and the last step of
// `npm run bench`): every committed rig run in bench/results/, oldest to newest, with one
// line per target: req/s on a log scale above, and req/s as a share of raw `node:http` in
// the same run below. Runs on different hosts differ in raw speed (shaded bands mark each
// host), so the lower panel is the one that compares across them. Plain SVG, written here
// without a library; the output depends on the results alone, so it is reproducible.
//   node bench/chart.ts [--out docs/performance.svg]
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { type Host, type Result, type RigResult, readResults } from './results.ts'

const ROOT = new URL('..', import.meta.url).pathname
export const CHART_FILE = join(ROOT, 'docs/performance.svg')

/** The targets drawn, in legend order; a target absent from a run leaves a gap. */
const SERIES = [
  { name: 'statusd-patch', label: 'statusd PATCH (SQLite)', color: '#0072B2', dash: '', width: 3 },
  { name: 'statusd-post', label: 'statusd POST (SQLite)', color: '#56B4E9', dash: '6 4', width: 2 },
  { name: 'lean', label: 'lean Fastify (floor)', color: '#009E73', dash: '', width: 2 },
  { name: 'naive', label: 'naive Express', color: '#D55E00', dash: '', width: 2 },
  {
    name: 'statusd-patch-pg',
    label: 'statusd PATCH (PostgreSQL)',
    color: '#CC79A7',
    dash: '',
    width: 2,
  },
  {
    name: 'statusd-post-pg',
    label: 'statusd POST (PostgreSQL)',
    color: '#CC79A7',
    dash: '6 4',
    width: 2,
  },
  { name: 'raw', label: 'raw node:http (ceiling)', color: '#666666', dash: '2 3', width: 2 },
] as const

const SHADES = ['#e8eef5', '#f3efe6', '#eaf3ea', '#f3e9f0']
const W = 940
const LEFT = 64
const RIGHT = 250
const PLOT_W = W - LEFT - RIGHT
const TOP = { y: 70, h: 200 }
const LOW = { y: 310, h: 160 }
const H = 560

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
const f1 = (n: number) => (Math.round(n * 10) / 10).toString()
const hostName = (h: Host) => `${h.cpus} × ${h.cpu}`
const thousands = (n: number) => (n >= 1000 ? `${n / 1000}k` : String(n))

/** The SVG for these results (only rig runs are drawn). */
export function renderChart(results: Result[]): string {
  const runs = results.filter((r): r is RigResult => r.kind === 'rig')
  if (runs.length === 0) throw new Error('chart: no rig results')
  const x = (i: number) =>
    LEFT + (runs.length === 1 ? PLOT_W / 2 : (i / (runs.length - 1)) * PLOT_W)
  const step = runs.length === 1 ? PLOT_W : PLOT_W / (runs.length - 1)

  // upper panel: req/s, log scale over whole decades around the data
  const all = runs.flatMap((r) => r.targets.map((t) => t.reqPerS ?? 0)).filter((v) => v > 0)
  const lo = 10 ** Math.floor(Math.log10(Math.min(...all)))
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...all)))
  const yTop = (v: number) =>
    TOP.y + TOP.h - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * TOP.h
  // lower panel: share of raw, linear from 0 to the largest share (raw itself left out)
  const shares = runs.flatMap((r) =>
    r.targets.filter((t) => t.name !== 'raw').map((t) => share(r, t.name) ?? 0),
  )
  const top = Math.max(0.05, Math.ceil(Math.max(...shares) / 0.05) * 0.05)
  const yLow = (v: number) => LOW.y + LOW.h - (v / top) * LOW.h

  const out: string[] = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="title desc" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif" font-size="12">`,
    '<title id="title">statusd against its peers, every committed run of npm run bench</title>',
    `<desc id="desc">${runs.length} runs from ${runs[0]?.date} to ${runs.at(-1)?.date}. Upper panel: requests per second of each target, log scale. Lower panel: each target's requests per second as a share of raw node:http in the same run.</desc>`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${LEFT}" y="24" font-size="16" font-weight="bold">statusd against its peers (npm run bench)</text>`,
    `<text x="${LEFT}" y="44" fill="#444">${esc(settings(runs))}; medians of each run's rounds. Shaded bands: the host of each run.</text>`,
  )

  // host bands: consecutive runs on the same host, one shade per host (named in the legend)
  const hosts = [...new Set(runs.map((r) => hostName(r.host)))]
  let start = 0
  runs.forEach((r, i) => {
    const next = runs[i + 1]
    if (next && hostName(next.host) === hostName(r.host)) return
    const x0 = Math.max(LEFT, x(start) - step / 2)
    const x1 = Math.min(LEFT + PLOT_W, x(i) + step / 2)
    const shade = SHADES[hosts.indexOf(hostName(r.host)) % SHADES.length]
    out.push(
      `<rect x="${f1(x0)}" y="${TOP.y}" width="${f1(x1 - x0)}" height="${LOW.y + LOW.h - TOP.y}" fill="${shade}"/>`,
    )
    start = i + 1
  })

  // axes and grid
  for (let v = lo; v <= hi; v *= 10) {
    for (const m of [1, 2, 5]) {
      const tick = v * m
      if (tick > hi) break
      const y = f1(yTop(tick))
      out.push(
        `<line x1="${LEFT}" y1="${y}" x2="${LEFT + PLOT_W}" y2="${y}" stroke="#cccccc" stroke-width="${m === 1 ? 1 : 0.5}"/>`,
        `<text x="${LEFT - 6}" y="${y}" dy="4" text-anchor="end" fill="#444">${thousands(tick)}</text>`,
      )
    }
  }
  for (let v = 0; v <= top + 1e-9; v += 0.05) {
    const y = f1(yLow(v))
    out.push(
      `<line x1="${LEFT}" y1="${y}" x2="${LEFT + PLOT_W}" y2="${y}" stroke="#cccccc" stroke-width="${v === 0 ? 1 : 0.5}"/>`,
      `<text x="${LEFT - 6}" y="${y}" dy="4" text-anchor="end" fill="#444">${v.toFixed(2)}</text>`,
    )
  }
  out.push(
    `<text transform="translate(18 ${TOP.y + TOP.h / 2}) rotate(-90)" text-anchor="middle" fill="#222">req/s (log)</text>`,
    `<text transform="translate(18 ${LOW.y + LOW.h / 2}) rotate(-90)" text-anchor="middle" fill="#222">× raw node:http</text>`,
  )

  // x axis: one tick per run, the date under the first run of each day (without the year
  // when all runs share one), none closer than a label's width to the one before
  const years = new Set(runs.map((r) => r.date.slice(0, 4)))
  const short = years.size === 1
  let lastLabel = Number.NEGATIVE_INFINITY
  runs.forEach((r, i) => {
    const xi = x(i)
    out.push(
      `<line x1="${f1(xi)}" y1="${LOW.y + LOW.h}" x2="${f1(xi)}" y2="${LOW.y + LOW.h + 4}" stroke="#444444"/>`,
    )
    if ((i === 0 || runs[i - 1]?.date !== r.date) && xi - lastLabel >= (short ? 40 : 72)) {
      out.push(
        `<text x="${f1(xi)}" y="${LOW.y + LOW.h + 18}" text-anchor="middle" fill="#444">${esc(short ? r.date.slice(5) : r.date)}</text>`,
      )
      lastLabel = xi
    }
  })
  out.push(
    `<text x="${LEFT + PLOT_W / 2}" y="${LOW.y + LOW.h + 40}" text-anchor="middle" fill="#222">runs${short ? ` of ${[...years][0]}` : ''}, oldest to newest (bench/results/*-rig.json)</text>`,
  )

  // the series
  for (const s of SERIES) {
    const style = `fill="none" stroke="${s.color}" stroke-width="${s.width}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}`
    const upper = runs.map((r) => r.targets.find((t) => t.name === s.name)?.reqPerS ?? null)
    out.push(
      ...series(
        upper.map((v) => (v ? yTop(v) : null)),
        x,
        style,
        s.color,
      ),
    )
    if (s.name !== 'raw') {
      const lower = runs.map((r) => share(r, s.name))
      out.push(
        ...series(
          lower.map((v) => (v === null ? null : yLow(v))),
          x,
          style,
          s.color,
        ),
      )
    }
  }

  // legend, only for targets that appear
  let ly = TOP.y + 10
  for (const s of SERIES) {
    if (!runs.some((r) => r.targets.some((t) => t.name === s.name))) continue
    const lx = LEFT + PLOT_W + 16
    out.push(
      `<line x1="${lx}" y1="${ly}" x2="${lx + 28}" y2="${ly}" stroke="${s.color}" stroke-width="${s.width}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`,
      `<text x="${lx + 34}" y="${ly}" dy="4" fill="#222">${esc(s.label)}</text>`,
    )
    ly += 20
  }
  ly += 10
  out.push(
    `<text x="${LEFT + PLOT_W + 16}" y="${ly}" dy="4" fill="#222" font-weight="bold">hosts</text>`,
  )
  hosts.forEach((h, i) => {
    ly += 20
    const lx = LEFT + PLOT_W + 16
    out.push(
      `<rect x="${lx}" y="${ly - 7}" width="28" height="14" fill="${SHADES[i % SHADES.length]}" stroke="#bbbbbb"/>`,
      `<text x="${lx + 34}" y="${ly}" dy="4" fill="#222">${esc(h)}</text>`,
    )
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}

/** The load of the runs, in words, when they all share it. */
function settings(runs: RigResult[]): string {
  const p = runs[0]?.params
  const same = p && runs.every((r) => JSON.stringify(r.params) === JSON.stringify(p))
  if (!same) return 'wrk; the load of each run is in its file'
  const n = p.statuses.toLocaleString('en-US').replace(/,/g, ' ')
  return `wrk, ${p.connections} connections, ${n} statuses, ${p.rounds} rounds of ${p.durationS} s`
}

/** A target's req/s over raw's in the same run, from the measured req/s. */
function share(run: RigResult, name: string): number | null {
  const raw = run.targets.find((t) => t.name === 'raw')?.reqPerS
  const rps = run.targets.find((t) => t.name === name)?.reqPerS
  return raw && rps ? rps / raw : null
}

/** Polylines through consecutive present points, and a dot on each point. */
function series(
  ys: (number | null)[],
  x: (i: number) => number,
  style: string,
  color: string,
): string[] {
  const lines: string[] = []
  const dots: string[] = []
  let run: string[] = []
  const flush = () => {
    if (run.length > 1) lines.push(`<polyline points="${run.join(' ')}" ${style}/>`)
    run = []
  }
  ys.forEach((y, i) => {
    if (y === null) {
      flush()
      return
    }
    run.push(`${f1(x(i))},${f1(y)}`)
    dots.push(`<circle cx="${f1(x(i))}" cy="${f1(y)}" r="2.5" fill="${color}"/>`)
  })
  flush()
  return [...lines, ...dots]
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: CHART_FILE } } })
  const svg = renderChart(readResults().map((r) => r.result))
  writeFileSync(values.out, svg)
  console.error(`bench: wrote ${values.out}`)
}
