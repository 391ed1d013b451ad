// `npm test` after the type check: the whole suite on SQLite, then — when TEST_DATABASE_URL
// names a PostgreSQL server — the same suite again on PostgreSQL (TEST_ENGINE=postgres).
// Arguments (test files or globs) replace the default "test/**/*.test.ts".
import { spawnSync } from 'node:child_process'

const files = process.argv.slice(2)
const args = [
  '--test',
  '--test-reporter=spec',
  ...(files.length > 0 ? files : ['test/**/*.test.ts']),
]

function run(engine: 'sqlite' | 'postgres'): boolean {
  process.stdout.write(`\n=== test suite on ${engine} ===\n\n`)
  const result = spawnSync(process.execPath, args, {
    stdio: 'inherit',
    env: { ...process.env, TEST_ENGINE: engine },
  })
  return result.status === 0
}

const results: string[] = []
let ok = run('sqlite')
results.push(`sqlite: ${ok ? 'passed' : 'FAILED'}`)
const pgUrl = process.env.TEST_DATABASE_URL
if (pgUrl) {
  const passed = run('postgres')
  ok &&= passed
  results.push(`postgres: ${passed ? 'passed' : 'FAILED'}`)
} else {
  results.push('postgres: skipped')
}

process.stdout.write(`\n=== ${results.join(' · ')} ===\n`)
if (!pgUrl)
  process.stdout.write(
    'PostgreSQL suites skipped: TEST_DATABASE_URL not set (e.g. TEST_DATABASE_URL=postgres://user@127.0.0.1:5432/statusd_test npm test)\n',
  )
process.exitCode = ok ? 0 : 1
