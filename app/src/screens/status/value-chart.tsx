import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import type { HistoryEntry } from '../../types.ts'

// The value over time, drawn with uPlot (docs/app.md#history-and-chart). Values are text,
// so: when every value shown is a number, the chart plots the numbers; otherwise each
// distinct value gets its own level (in order of first appearance) and the axis names it.
// Either way the line steps: a value holds until the next update. The timeline below the
// chart says the same in words, so the picture is not the only way to read it.

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

export default function ValueChart(props: { entries: HistoryEntry[] }) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = box.current
    if (!element) return
    const { times, levels, labels } = chartData(props.entries)
    const style = getComputedStyle(element)
    const text = style.getPropertyValue('--text').trim() || '#111827'
    const line = style.getPropertyValue('--accent').trim() || '#1d4ed8'
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
            label: 'Value',
            stroke: line,
            width: 2,
            paths: uPlot.paths.stepped?.({ align: 1 }),
            points: { show: times.length < 60 },
          },
        ],
        axes: [
          axis,
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
  }, [props.entries])
  const count = props.entries.length
  return (
    <figure class="value-chart">
      <div
        ref={box}
        class="value-chart-plot"
        role="img"
        aria-label={`Chart of the last ${count} ${count === 1 ? 'value' : 'values'} over time; the list below has each of them.`}
      />
    </figure>
  )
}
