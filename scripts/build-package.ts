// Builds what the npm package runs (docs/operations.md#install-from-npm), as its `prepack`
// script: Node does not strip types from files under node_modules, so the package carries
// JavaScript compiled from src/ into lib/, module for module, in the same layout (so paths
// such as `../../package.json` and `../../dist/app` still meet their files). TypeScript's own
// emit rewrites the `.ts` import specifiers to `.js` (rewriteRelativeImportExtensions,
// tsconfig.build.json). The files src/ reads at run time (the web pages' assets) are
// copied beside their modules. The browser app (dist/app) is built by the `prepare` script,
// which npm runs after this one when it packs.
// A checkout never uses lib/: bin/statusd.js runs src/ when it is there.
import { spawnSync } from 'node:child_process'
import { cpSync, globSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const lib = path.join(root, 'lib')

rmSync(lib, { recursive: true, force: true })
// its `bin`, which the package's exports do not name
const tsc = path.join(
  path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
  'bin/tsc',
)
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
})
if (compiled.status !== 0) {
  process.stderr.write('build-package: TypeScript could not compile src/\n')
  process.exit(1)
}
const assets = globSync('**/*', { cwd: path.join(root, 'src'), withFileTypes: true }).filter(
  (entry) => entry.isFile() && !entry.name.endsWith('.ts'),
)
for (const entry of assets) {
  const from = path.join(entry.parentPath, entry.name)
  cpSync(from, path.join(lib, path.relative(path.join(root, 'src'), from)))
}
process.stdout.write(`build-package: lib/ (${assets.length} assets) built\n`)
