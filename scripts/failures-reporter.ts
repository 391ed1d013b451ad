// A node:test reporter that writes only the failures, each with its file and error, so that
// `scripts/test.ts` can repeat them at the very end of a long run (where a CI log's tail is).
import type { TestEvent } from 'node:test/reporters'

const MAX_LINES = 16

export default async function* failures(source: AsyncIterable<TestEvent>) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue
    const { name, file, line, details } = event.data
    // a suite fails when a test in it does: its own entry adds nothing but the suite's name
    const error = details.error as (Error & { cause?: unknown; failureType?: string }) | undefined
    if (error?.failureType === 'subtestsFailed') continue
    const cause = error?.cause instanceof Error ? error.cause : error
    const text = String(cause?.stack ?? cause?.message ?? cause ?? 'failed')
      .split('\n')
      .slice(0, MAX_LINES)
      .join('\n')
    const where = file ? `${file.replace(`${process.cwd()}/`, '')}${line ? `:${line}` : ''}` : ''
    yield `✖ ${name}\n  ${where}\n${text.replace(/^/gm, '    ')}\n\n`
  }
}
