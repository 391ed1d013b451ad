// A node:test reporter that writes how long each test file took, its process from start to
// exit, slowest first, one file a line: `seconds file`. `scripts/test.ts` prints the
// slowest of them at the end of a run, where the time of a CI run is looked into
// (docs/architecture.md#tests).
import { isAbsolute, relative } from 'node:path'
import type { TestEvent } from 'node:test/reporters'

export default async function* durations(source: AsyncIterable<TestEvent>) {
  const files = new Map<string, number>()
  for await (const event of source) {
    if (event.type !== 'test:complete') continue
    const { name, file, nesting, details } = event.data
    // the runner reports each file as a test of its own, named after the file
    if (nesting !== 0 || !file) continue
    const path = relative(process.cwd(), file)
    if (name === path || (isAbsolute(name) && name === file)) files.set(path, details.duration_ms)
  }
  for (const [path, ms] of [...files].sort(([, a], [, b]) => b - a))
    yield `${(ms / 1000).toFixed(1).padStart(7)} ${path}\n`
}
