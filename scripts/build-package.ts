// Builds what the npm package runs (docs/operations.md#install-from-npm), as its `prepack`
// script: Node does not strip types from files under node_modules, so the package carries
// JavaScript compiled from src/ into lib/, module for module, in the same layout (so paths
// such as `../../package.json` and `../../dist/app` still meet their files). TypeScript's own
// emit rewrites the `.ts` import specifiers to `.js` (rewriteRelativeImportExtensions,
// tsconfig.build.json). The files src/ reads at run time (the web pages' assets) are
// copied beside their modules. The browser app (dist/app) is built by the `prepare` script,
// which npm runs after this one when it packs.
// The CLI imports the client library (packages/client) from its sources through one module,
// src/cli/statusd-client.ts: in lib/ that module is the library bundled by esbuild, as its
// own package build bundles it (eventsource-parser in it), so the package needs no
// @statusd/client from the registry. tsc compiles from the repository's root for that
// import, into a scratch folder whose src/ becomes lib/.
// A checkout never uses lib/: bin/statusd.js runs src/ when it is there.
import { spawnSync } from 'node:child_process'
import { cpSync, globSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { build } from 'esbuild'

const root = path.resolve(import.meta.dirname, '..')
const lib = path.join(root, 'lib')
const scratch = mkdtempSync(path.join(tmpdir(), 'statusd-build-package-'))

rmSync(lib, { recursive: true, force: true })
// its `bin`, which the package's exports do not name
const tsc = path.join(
  path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
  'bin/tsc',
)
const compiled = spawnSync(
  process.execPath,
  [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', scratch],
  { stdio: 'inherit' },
)
if (compiled.status !== 0) {
  rmSync(scratch, { recursive: true, force: true })
  process.stderr.write('build-package: TypeScript could not compile src/\n')
  process.exit(1)
}
cpSync(path.join(scratch, 'src'), lib, { recursive: true })
rmSync(scratch, { recursive: true, force: true })
await build({
  entryPoints: [path.join(root, 'packages/client/src/index.ts')],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  outfile: path.join(lib, 'cli/statusd-client.js'),
  // the notice MIT asks to go with a copy of eventsource-parser
  footer: {
    js: `/*! eventsource-parser, bundled above:\n\n${readFileSync(path.join(root, 'node_modules/eventsource-parser/LICENSE'), 'utf8').trim()}\n*/`,
  },
  logLevel: 'warning',
})
const assets = globSync('**/*', { cwd: path.join(root, 'src'), withFileTypes: true }).filter(
  (entry) => entry.isFile() && !entry.name.endsWith('.ts'),
)
for (const entry of assets) {
  const from = path.join(entry.parentPath, entry.name)
  cpSync(from, path.join(lib, path.relative(path.join(root, 'src'), from)))
}
process.stdout.write(`build-package: lib/ (${assets.length} assets) built\n`)
