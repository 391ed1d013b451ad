// `npm test` after the type check: the whole suite on SQLite, then — when TEST_DATABASE_URL
// names a PostgreSQL server — again on PostgreSQL (TEST_ENGINE=postgres), the files whose
// result can depend on the engine (below). Arguments (test files or globs) replace the
// default "test/**/*.test.ts".
//
// Test files run in parallel, one more than there are cores (TEST_CONCURRENCY to change):
// each is a process of its own, and tests share nothing across files (ports are picked by
// the system, files live in folders of their own, each process has a PostgreSQL database of
// its own). The longest files, the browser suites, start first, so that no long file is
// left running alone at the end. One seed drives every test's randomness in a run:
// TEST_SEED=<the printed seed> replays it.
import { spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { globSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from './build-app.ts'
import { engineFiles } from './engine-files.ts'

const files = process.argv.slice(2)
// one more file than cores: a file spends much of its time waiting on a browser, a server
// process or a socket, and with one per core the cores stood idle for half the run
const concurrency = Number(process.env.TEST_CONCURRENCY) || availableParallelism() + 1
const seed = process.env.TEST_SEED || process.env.FUZZ_SEED || String(randomInt(2 ** 31))
// the failures, each with its error, are also written to a file per engine and repeated at
// the very end of the output, where a long run's log is read (scripts/failures-reporter.ts)
const failuresDir = mkdtempSync(join(tmpdir(), 'statusd-test-failures-'))
const failures: string[] = []
// the slowest files of each engine's pass, printed at the end: where a run's time goes
// (scripts/durations-reporter.ts)
const slowest: string[] = []
const SLOWEST_SHOWN = 10
// the responses checked against the OpenAPI document (test/helpers/contract.ts), per engine
const contract: string[] = []

function slowestFiles(engine: string, durationsFile: string): string {
  let lines: string[] = []
  try {
    lines = readFileSync(durationsFile, 'utf8').split('\n').filter(Boolean)
  } catch {
    // no file: the run ended before its reporters wrote anything
  }
  const total = lines.reduce((sum, line) => sum + Number.parseFloat(line), 0)
  return `${engine}: ${lines.length} files, ${total.toFixed(0)} s in all; the slowest, in seconds:\n${lines.slice(0, SLOWEST_SHOWN).join('\n')}\n`
}

// What the PostgreSQL pass runs (docs/architecture.md#tests): only the files whose result
// can depend on the engine, those that import test/helpers/engine.ts (scripts/engine-files.ts);
// the others would run the same a second time. Of the whole suite, not the browser suites
// (test/app, test/browser, test/journeys) either: they test pages and screens, and the API
// they call is tested on both engines by the other suites. Nor the suites of what the HTTP
// layer and the clients decide whatever the storage (ENGINE_NEUTRAL: the OWASP checks, the
// fuzzers, the plugins, the OpenAPI document, languages, the web files, the client, the CLI,
// API keys' scopes and the validation of input): they reach the engine only through the app they start, whose storage calls the
// other suites make on both engines; one of them that names the engine itself (imports
// test/helpers/engine.ts) still runs on both. Named files run on PostgreSQL when they
// depend on the engine, browser and engine-neutral suites too
// (docs/decisions/0032-postgresql-pass-runs-what-storage-decides.md).
const BROWSER_SUITES = /^test\/(app|browser|journeys)\//
const ENGINE_NEUTRAL =
  /^test\/((owasp|fuzz|plugins|openapi|i18n|web|client|cli|keys)\/|statuses\/validation\.test\.ts$)/
const namesTheEngine = (file: string) =>
  /from '\.\.\/helpers\/engine\.ts'/.test(readFileSync(file, 'utf8'))
const named = files.length > 0
// the browser suites first: they are the longest files (the slowest list at the end says so)
const longestFirst = (list: string[]) => [
  ...list.filter((f) => BROWSER_SUITES.test(f)),
  ...list.filter((f) => !BROWSER_SUITES.test(f)),
]
const testFiles = longestFirst(
  named
    ? [...new Set(files.flatMap((f) => globSync(f)))].sort()
    : globSync('test/**/*.test.ts').sort(),
)
const onEngine = engineFiles(testFiles)
const postgresFiles = named
  ? onEngine
  : onEngine.filter(
      (f) => !BROWSER_SUITES.test(f) && (!ENGINE_NEUTRAL.test(f) || namesTheEngine(f)),
    )

/** One engine's pass: whether it passed. */
function run(engine: 'sqlite' | 'postgres'): Promise<boolean> {
  const chosen = engine === 'postgres' ? postgresFiles : testFiles
  const count = chosen.length
  const atOnce = concurrency
  const heading = `\n=== test suite on ${engine}: ${count} files, ${atOnce} at a time (TEST_SEED=${seed}) ===\n\n`
  process.stdout.write(heading)
  // note: node --test given no file runs its own default set
  if (count === 0) return Promise.resolve(true)
  const failuresFile = join(failuresDir, engine)
  const durationsFile = join(failuresDir, `${engine}.durations`)
  const reporters = [
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${import.meta.dirname}/failures-reporter.ts`,
    `--test-reporter-destination=${failuresFile}`,
    `--test-reporter=${import.meta.dirname}/durations-reporter.ts`,
    `--test-reporter-destination=${durationsFile}`,
    `--test-reporter=${import.meta.dirname}/contract-reporter.ts`,
    `--test-reporter-destination=${durationsFile}.contract`,
  ]
  // TEST_ENGINE_FILES: test/helpers/engine.ts fails a file it is loaded by that is not there.
  // NODE_COMPILE_CACHE: every file is a process that loads much the same modules; Node keeps
  // their compiled code (the type-stripped TypeScript too) for the next, in the directory
  // bin/statusd.js uses for statusd itself.
  const env = {
    NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache'),
    ...process.env,
    TEST_ENGINE: engine,
    TEST_SEED: seed,
    TEST_ENGINE_FILES: onEngine.join('\n'),
  }
  const child = spawn(
    process.execPath,
    ['--test', `--test-concurrency=${atOnce}`, ...reporters, ...chosen],
    { stdio: ['ignore', 'inherit', 'inherit'], env },
  )
  return new Promise<boolean>((resolve) => {
    child.on('close', (code) => resolve(code === 0))
  }).then((passed) => finish(engine, failuresFile, durationsFile, passed))
}

/** What a pass left: its failures, slowest files and checked responses, for the summary. */
function finish(
  engine: string,
  failuresFile: string,
  durationsFile: string,
  passed: boolean,
): boolean {
  let failed = ''
  try {
    failed = readFileSync(failuresFile, 'utf8')
  } catch {
    // no file: the run ended before its reporters wrote anything (the exit status says so)
  }
  if (failed) failures.push(`--- failed on ${engine} ---\n${failed}`)
  slowest.push(slowestFiles(engine, durationsFile))
  try {
    const [responses, inFiles] = readFileSync(`${durationsFile}.contract`, 'utf8').split(' ')
    contract.push(`${engine}: ${responses} responses in ${Number(inFiles)} files`)
  } catch {
    // no file: the run ended before its reporters wrote anything
  }
  return passed
}

// the browser tests open the app: build it from the sources being tested (under a second)
await buildApp()

const results: string[] = []
const pgUrl = process.env.TEST_DATABASE_URL
let ok = await run('sqlite')
results.push(`sqlite: ${ok ? 'passed' : 'FAILED'}`)
if (pgUrl) {
  const passed = await run('postgres')
  ok &&= passed
  results.push(`postgres: ${passed ? 'passed' : 'FAILED'}`)
} else {
  results.push('postgres: skipped')
}

rmSync(failuresDir, { recursive: true, force: true })
process.stdout.write(`\n=== the slowest files ===\n\n${slowest.join('\n')}`)
process.stdout.write(`\n=== checked against the OpenAPI document ===\n\n${contract.join('\n')}\n`)
if (failures.length > 0) process.stdout.write(`\n=== what failed ===\n\n${failures.join('\n')}`)
process.stdout.write(`\n=== ${results.join(' · ')} · TEST_SEED=${seed} ===\n`)
if (!pgUrl)
  process.stdout.write(
    'PostgreSQL suites skipped: TEST_DATABASE_URL not set (e.g. TEST_DATABASE_URL=postgres://user@127.0.0.1:5432/statusd_test npm test)\n',
  )
process.exitCode = ok ? 0 : 1
