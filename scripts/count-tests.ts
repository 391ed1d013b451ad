// `node scripts/count-tests.ts [files or globs…]`: how many tests the suite declares and the
// rules they name, without running one: each test file is loaded with node:test replaced by
// a stand-in that records every `describe`/`it`/`test` (a suite's body runs, to declare its
// tests; a test's never does). Subtests made inside a test's body (`t.test`) are counted
// where they are written. For the closing note of a change that moves or merges tests: the
// counts before and after say whether any went missing (docs/architecture.md#tests).
import { globSync, readFileSync } from 'node:fs'
import { registerHooks } from 'node:module'
import { relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

interface Declared {
  file: string
  /** The names of the suites around it, then its own. */
  path: string[]
}

const declared: Declared[] = []
const state = { file: '', suites: [] as string[] }
Object.assign(globalThis, { __countTests: { declared, state } })

// node:test's API as the test files use it: suites run their body at once, tests are noted
const STAND_IN = `
const { declared, state } = globalThis.__countTests
const args = (name, options, fn) => typeof name === 'function' ? [name.name, name]
  : typeof options === 'function' ? [name, options] : [name, fn]
export function describe(...a) {
  const [name, fn] = args(...a)
  state.suites.push(String(name))
  try { fn?.({}) } finally { state.suites.pop() }
}
export function it(...a) {
  const [name] = args(...a)
  declared.push({ file: state.file, path: [...state.suites, String(name)] })
}
for (const f of [describe, it]) for (const m of ['skip', 'todo', 'only']) f[m] = f
export const suite = describe
export const test = it
const noop = () => {}
export const before = noop, after = noop, beforeEach = noop, afterEach = noop
export const mock = new Proxy({}, { get: () => noop })
export default test
`
const standIn = `data:text/javascript,${encodeURIComponent(STAND_IN)}`
registerHooks({
  resolve: (specifier, context, next) =>
    specifier === 'node:test' || specifier === 'test'
      ? { url: standIn, shortCircuit: true }
      : next(specifier, context),
})

const patterns = process.argv.slice(2)
const files = [
  ...new Set((patterns.length > 0 ? patterns : ['test/**/*.test.ts']).flatMap((p) => globSync(p))),
].sort()
const failed: string[] = []
let subtests = 0
for (const file of files) {
  state.file = file
  try {
    await import(pathToFileURL(resolve(file)).href)
  } catch (err) {
    failed.push(`${file}: ${(err as Error).message.split('\n')[0]}`)
  }
  // a test's own subtests (`t.test(…)`, also through a helper's context)
  subtests += readFileSync(file, 'utf8').match(/\b[a-z]\w*\.test\(/g)?.length ?? 0
}
const names = new Set(declared.map((d) => d.path.join(' › ')))
const anchors = new Set(
  files.flatMap((f) => readFileSync(f, 'utf8').match(/docs\/[\w-]+\.md#[\w-]+/g) ?? []),
)
const perFolder = new Map<string, number>()
for (const d of declared) {
  const folder = relative('test', d.file).split('/')[0] as string
  perFolder.set(folder, (perFolder.get(folder) ?? 0) + 1)
}
process.stdout.write(
  `${files.length} files · ${declared.length} tests declared · ${names.size} distinct names (suite › test) · ${subtests} subtest call sites in test bodies · ${anchors.size} docs/…#… sections cited\n`,
)
for (const [folder, n] of [...perFolder].sort()) process.stdout.write(`  ${folder}: ${n}\n`)
if (failed.length > 0) process.stdout.write(`not loaded:\n${failed.join('\n')}\n`)
// note: a loaded file may hold handles (a pool, a timer); the count is done
process.exit(failed.length > 0 ? 1 : 0)
