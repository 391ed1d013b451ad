// Which test files the PostgreSQL pass of `npm test` runs (docs/architecture.md#tests): those
// whose result can depend on the engine. The two passes differ only in TEST_ENGINE, which
// test code reads only through test/helpers/engine.ts (test/scripts/engine-files.test.ts checks
// that), so a file's result can depend on the engine only when it loads that module: when
// the module is among its imports, followed from file to file through the test folder.
// test/helpers/engine.ts checks the answer at run time: a test file that loads it without
// being found here fails the SQLite pass.
import { readFileSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/** The module through which test code learns the engine under test. */
export const ENGINE_MODULE = 'test/helpers/engine.ts'

// a relative module named in a static import or export (`from '…'`, `import '…'`) or a
// dynamic import of a literal (`import('…')`); a match inside a comment only adds a file
const IMPORTED = /(?:\bfrom|\bimport)\s*\(?\s*['"](\.\.?\/[^'"]+)['"]/g
// an import or export of types alone (`import type { … } from '…'`): erased before the file
// runs, it loads nothing (a test of pure functions that takes a type from a helper of apps)
const TYPES_ONLY = /\b(?:import|export)\s+type\s+[^;'"]*?\bfrom\s*['"][^'"]+['"]/g

/**
 * The files among `files` (paths relative to `root`) that import ENGINE_MODULE, directly or
 * through other modules of the test folder.
 */
export function engineFiles(files: readonly string[], root = process.cwd()): string[] {
  const engine = resolve(root, ENGINE_MODULE)
  const testFolder = `${resolve(root, 'test')}/`
  // who imports whom, among the files the given ones lead to
  const importers = new Map<string, string[]>()
  const seen = new Set<string>()
  const pending = files.map((file) => resolve(root, file))
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue
    seen.add(file)
    // a path that is no file (a module the scan guessed from a comment, a folder) adds nothing
    const text = statSync(file, { throwIfNoEntry: false })?.isFile()
      ? readFileSync(file, 'utf8')
      : ''
    for (const [, specifier] of text.replace(TYPES_ONLY, '').matchAll(IMPORTED)) {
      const target = resolve(dirname(file), specifier as string)
      // src/ and the packages never read the engine under test: test code hands them a URL
      if (!target.startsWith(testFolder)) continue
      importers.set(target, [...(importers.get(target) ?? []), file])
      pending.push(target)
    }
  }
  // every file from which the engine module is reached: its importers, theirs, and so on
  const reaching = new Set([engine])
  const back = [engine]
  for (let file = back.pop(); file !== undefined; file = back.pop()) {
    for (const importer of importers.get(file) ?? []) {
      if (reaching.has(importer)) continue
      reaching.add(importer)
      back.push(importer)
    }
  }
  return files.filter((file) => reaching.has(resolve(root, file)))
}
