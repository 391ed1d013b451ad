import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import { locale, t } from '../../i18n.ts'
import { intlLocale } from '../../time.ts'
import type { HistoryEntry } from '../../types.ts'

// The value over time, drawn with uPlot (docs/app.md#history-and-chart). Values are text,
// so: when every value shown is a number, the chart plots the numbers; otherwise each
// distinct value gets its own level (in order of first appearance) and the axis names it.
// Either way the line steps: a value holds until the next update. The timeline below the
// chart says the same in words, so the picture is not the only way to read it. Each step is
// drawn in its value's colour (the palette's, as on the chips), and the newest value holds
// until now.

export function chartData(entries: HistoryEntry[]): {
  times: number[]
  levels: number[]
  labels: string[] | null
} {
  const oldestFirst = [...entries].reverse()
  const times = oldestFirst.map((e) => Date.parse(e.at) / 1000)
  const numeric = oldestFirst.every((e) => /^-?\d+(\.\d+)?$/.test(e.value.trim()))
  if (numeric) return { times, levels: oldestFirst.map((e) => Number(e.value)), labels: null }
  const labels: string[] = []
  const levels = oldestFirst.map((e) => {
    let at = labels.indexOf(e.value)
    if (at < 0) at = labels.push(e.value) - 1
    return at
  })
  return { times, levels, labels }
}

/**
 * A stroke that colours each step by its value: a horizontal gradient with a hard stop at
 * each update's time, so the line between two updates has the first one's colour.
 */
function stepColours(u: uPlot, times: number[], colours: string[]): CanvasGradient | string {
  const { left, width } = u.bbox
  const last = colours.at(-1) ?? '#000000'
  if (!(width > 0) || times.length < 2) return last
  const gradient = u.ctx.createLinearGradient(left, 0, left + width, 0)
  let previous = colours[0] ?? last
  gradient.addColorStop(0, previous)
  for (let i = 1; i < times.length; i++) {
    const x = (u.valToPos(times[i] as number, 'x', true) - left) / width
    const stop = Math.min(1, Math.max(0, x))
    const colour = colours[i] ?? last
    gradient.addColorStop(stop, previous)
    gradient.addColorStop(stop, colour)
    previous = colour
  }
  gradient.addColorStop(1, previous)
  return gradient
}

/**
 * The time axis's labels in the language shown: days when the ticks are a day or more apart,
 * else times of day, with seconds when they are under a minute apart (uPlot's own labels are
 * English).
 */
function timeLabels(_u: uPlot, splits: number[], _axis: number, _space: number, step: number) {
  const format = new Intl.DateTimeFormat(
    intlLocale(),
    step >= 86_400
      ? { day: 'numeric', month: 'short' }
      : step >= 60
        ? { hour: '2-digit', minute: '2-digit' }
        : { hour: '2-digit', minute: '2-digit', second: '2-digit' },
  )
  return splits.map((seconds) => format.format(new Date(seconds * 1000)))
}

export default function ValueChart(props: {
  entries: HistoryEntry[]
  /** A value's colour (#rrggbb). */
  colourOf: (value: string) => string
}) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = box.current
    if (!element) return
    const { times, levels, labels } = chartData(props.entries)
    const colours = [...props.entries].reverse().map((e) => props.colourOf(e.value))
    // the newest value holds until now: one more point (not marked), so its step is drawn
    const updates = times.length
    const nowSeconds = Date.now() / 1000
    if (updates > 0 && nowSeconds > (times.at(-1) as number)) {
      times.push(nowSeconds)
      levels.push(levels.at(-1) as number)
      colours.push(colours.at(-1) as string)
    }
    const style = getComputedStyle(element)
    const text = style.getPropertyValue('--text').trim() || '#111827'
    const grid = style.getPropertyValue('--border').trim() || '#c9ced6'
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } }
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 200),
        height: 220,
        legend: { show: false },
        cursor: { show: false },
        scales: labels
          ? { y: { range: [-0.5, Math.max(labels.length - 0.5, 0.5)] } }
          : { y: { auto: true } },
        series: [
          {},
          {
            label: t('app.status.chart.series'),
            stroke: (u: uPlot) => stepColours(u, times, colours),
            width: 3,
            paths: uPlot.paths.stepped?.({ align: 1 }),
            points: {
              show: updates < 60,
              filter: () => Array.from({ length: updates }, (_, i) => i),
            },
          },
        ],
        axes: [
          { ...axis, values: timeLabels },
          labels
            ? {
                ...axis,
                size: 90,
                splits: () => labels.map((_, i) => i),
                values: (_u: uPlot, splits: number[]) => splits.map((i) => labels[i] ?? ''),
              }
            : axis,
        ],
      },
      [times, levels],
      element,
    )
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(element.clientWidth, 200), height: 220 }),
    )
    resize.observe(element)
    return () => {
      resize.disconnect()
      chart.destroy()
    }
  }, [props.entries, props.colourOf, locale.value])
  const count = props.entries.length
  return (
    <figure class="value-chart">
      <div
        ref={box}
        class="value-chart-plot"
        role="img"
        aria-label={t('app.status.chart.label', { count })}
      />
    </figure>
  )
}
