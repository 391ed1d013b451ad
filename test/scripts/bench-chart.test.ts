import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { CHART_FILE, renderChart } from '../../bench/chart.ts'
import { type Result, readResults, writeResult } from '../../bench/results.ts'

// The committed benchmark results (bench/results/*.json) and the chart drawn from them
// (docs/performance.md#the-chart). No benchmark runs here: only files and pure functions.

/**
 * Checks that `text` is well-formed XML of the subset the chart writes: elements with
 * quoted attributes, text without markup characters except entities, tags that nest.
 */
function assertWellFormed(text: string): { root: string; elements: number } {
  const stack: string[] = []
  let root = ''
  let elements = 0
  const token = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)|(<)/g
  for (const m of text.matchAll(token)) {
    const [, closing, name, , selfClosing, chars, stray] = m
    if (stray)
      assert.fail(`a "<" that opens no tag at ${m.index}: ${text.slice(m.index, m.index + 40)}`)
    if (chars !== undefined) {
      assert.doesNotMatch(chars, /&(?!(?:amp|lt|gt|quot|apos|#\d+);)/, `a bare "&" in ${chars}`)
      assert.ok(stack.length > 0 || chars.trim() === '', `text outside the root: ${chars}`)
      continue
    }
    if (closing) {
      assert.equal(stack.pop(), name, `</${name}> closes another element`)
      continue
    }
    elements++
    if (!root) root = name as string
    else assert.ok(stack.length > 0, `a second root element <${name}>`)
    if (!selfClosing) stack.push(name as string)
  }
  assert.deepEqual(stack, [], 'elements left open')
  return { root, elements }
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/

describe('benchmark results and their chart', () => {
  const results = readResults()

  it('every committed result follows the schema', () => {
    assert.ok(results.length > 0, 'bench/results/ holds no results')
    for (const { file, result } of results) {
      assert.equal(result.schema, 1, file)
      assert.match(result.date, ISO_DATE, file)
      assert.ok(file.startsWith(result.date), `${file}: named after its date`)
      assert.ok(file.endsWith(`-${result.kind}.json`), `${file}: named after its kind`)
      assert.ok(result.commit === null || /^[0-9a-f]{40}$/.test(result.commit), file)
      assert.ok(result.host.cpus > 0 && result.host.cpu && result.host.node.startsWith('v'), file)
      assert.match(result.command, /^npm run bench/, file)
      if (result.kind === 'rig') {
        assert.ok(result.targets.length > 0, file)
        for (const t of result.targets) assert.ok(t.name && (t.reqPerS ?? 0) > 0, file)
      }
    }
  })

  it('draws a well-formed SVG from the committed results', () => {
    const svg = renderChart(results.map((r) => r.result))
    const { root, elements } = assertWellFormed(svg)
    assert.equal(root, 'svg')
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    assert.ok(elements > 50, 'a chart with lines, dots and labels')
    // a dot for statusd's PATCH per rig run that measured it, and one more below where raw
    // node:http ran beside it
    const rps = (r: Result, name: string) =>
      r.kind === 'rig' ? (r.targets.find((t) => t.name === name)?.reqPerS ?? 0) : 0
    const expected = results
      .map((r) => r.result)
      .reduce((n, r) => n + (rps(r, 'statusd-patch') > 0 ? 1 + (rps(r, 'raw') > 0 ? 1 : 0) : 0), 0)
    const patchDots = svg.match(/<circle [^>]*fill="#0072B2"/g) ?? []
    assert.ok(expected > 0)
    assert.equal(patchDots.length, expected)
  })

  it('is drawn the same way every time, and docs/performance.svg is the current drawing', () => {
    const list = results.map((r) => r.result)
    assert.equal(renderChart(list), renderChart(list))
    assert.equal(
      readFileSync(CHART_FILE, 'utf8'),
      renderChart(list),
      'docs/performance.svg is stale: run npm run bench:chart',
    )
  })

  it('escapes text and leaves a gap where a target did not run', () => {
    const base = results.find((r) => r.result.kind === 'rig')?.result
    assert.ok(base?.kind === 'rig')
    const host = { ...base.host, cpu: 'A & B <CPU>' }
    const template = base.targets.find((t) => t.name === 'raw') ?? base.targets[0]
    assert.ok(template)
    const runs: Result[] = [0, 1, 2].map((i) => ({
      ...base,
      host,
      targets: [
        ...base.targets.filter((t) => t.name !== 'lean'),
        ...(i === 1 ? [] : [{ ...template, name: 'lean', reqPerS: 1000 + i }]),
      ],
    }))
    const svg = renderChart(runs)
    assertWellFormed(svg)
    assert.match(svg, /A &amp; B &lt;CPU&gt;/)
    // the lean series: three dots would make one line; two apart make none
    const leanLines = svg.match(/<polyline [^>]*stroke="#009E73"/g) ?? []
    assert.equal(leanLines.length, 0)
  })

  it('writes a run as the next file of its day', () => {
    const dir = mkdtempSync(join(tmpdir(), 'statusd-results-'))
    try {
      const run = results[0]?.result as Result
      const first = writeResult({ ...run, date: '2030-01-02' }, dir)
      const second = writeResult({ ...run, date: '2030-01-02' }, dir)
      assert.ok(first.endsWith(`2030-01-02-01-${run.kind}.json`))
      assert.ok(second.endsWith(`2030-01-02-02-${run.kind}.json`))
      assert.equal(readdirSync(dir).length, 2)
      assert.deepEqual(
        readResults(dir).map((r) => r.result.date),
        ['2030-01-02', '2030-01-02'],
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
