// Builds the browser app (docs/app.md#how-it-is-built): app/src → dist/app, with esbuild.
// Runs in `npm ci` (the `prepare` script) and before the tests.
//
// Output: hashed, immutable files (`main-<hash>.js`, chunks loaded on demand, `main-<hash>.css`),
// the service worker at a fixed name (`sw.js`: its URL is its identity), and `build.json`,
// which tells the server which files the page loads. Every text file over 1 KiB also gets its
// Brotli (`.br`) and gzip (`.gz`) forms here, once: compressing them at the strongest levels
// is slow, which a server start (and every test's app) would otherwise pay.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import { build, type Plugin } from 'esbuild'
import { LANGUAGE_CODES } from '../src/i18n/languages.ts'

const root = path.resolve(import.meta.dirname, '..')
const outdir = path.join(root, 'dist', 'app')

// The embed's texts (docs/languages.md): each catalog's `embed` section, as the module
// `statusd:embed-texts`, so the embed carries its few texts in every language and no more.
const embedTexts: Plugin = {
  name: 'embed-texts',
  setup(b) {
    b.onResolve({ filter: /^statusd:embed-texts$/ }, (args) => ({
      path: args.path,
      namespace: 'embed-texts',
    }))
    b.onLoad({ filter: /.*/, namespace: 'embed-texts' }, () => {
      const sections = LANGUAGE_CODES.map((code) => {
        const file = path.join(root, 'src/i18n/locales', `${code}.json`)
        return [code, JSON.parse(readFileSync(file, 'utf8')).embed]
      })
      return { contents: JSON.stringify(Object.fromEntries(sections)), loader: 'json' }
    })
  },
}

export async function buildApp(): Promise<void> {
  rmSync(outdir, { recursive: true, force: true })
  mkdirSync(outdir, { recursive: true })
  const common = {
    bundle: true,
    minify: true,
    target: ['chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic' as const,
    jsxImportSource: 'preact',
    legalComments: 'linked' as const,
    logLevel: 'warning' as const,
    define: { 'process.env.NODE_ENV': '"production"' },
  }
  const app = await build({
    ...common,
    entryPoints: [path.join(root, 'app/src/main.tsx')],
    outdir,
    format: 'esm',
    splitting: true,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunks/[name]-[hash]',
    assetNames: 'assets/[name]-[hash]',
    sourcemap: 'linked',
    metafile: true,
  })
  await build({
    ...common,
    entryPoints: [path.join(root, 'app/src/sw.ts')],
    outfile: path.join(outdir, 'sw.js'),
    format: 'iife',
  })
  // the embed (docs/sharing.md#embeds): one module at a fixed name, loaded by other sites' pages
  await build({
    ...common,
    entryPoints: [path.join(root, 'app/src/embed.ts')],
    outfile: path.join(outdir, 'embed.js'),
    plugins: [embedTexts],
    format: 'esm',
  })
  cpSync(path.join(root, 'app/public'), outdir, { recursive: true })

  // the entry's files, for the server's page (src/web/app.routes.ts)
  const outputs = Object.entries(app.metafile.outputs)
  const entry = outputs.find(([, o]) => o.entryPoint === 'app/src/main.tsx')
  if (!entry) throw new Error('build-app: the entry point produced no output')
  const [js, meta] = entry
  const rel = (file: string) => path.relative(outdir, path.join(root, file))
  // the chunks the entry imports statically: the page preloads them with the entry, instead
  // of the browser finding them only once the entry has arrived
  const preload = meta.imports.filter((i) => i.kind === 'import-statement').map((i) => rel(i.path))
  const css = meta.cssBundle ? rel(meta.cssBundle) : null
  writeFileSync(
    path.join(outdir, 'build.json'),
    `${JSON.stringify({ js: rel(js), css, preload }, null, 2)}\n`,
  )
  await precompress(outdir)
}

/** The files worth compressing: text of more than 1 KiB (PNG is compressed already). */
const COMPRESSIBLE = (name: string, size: number) =>
  size > 1024 && !/\.(png|br|gz)$/.test(name) && name !== 'build.json'

const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

/** Writes `<file>.br` and `<file>.gz` next to every compressible file under dir. */
async function precompress(dir: string): Promise<void> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
  await Promise.all(
    files.map(async (file) => {
      const body = readFileSync(file)
      if (!COMPRESSIBLE(path.basename(file), body.length)) return
      const params = {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      }
      writeFileSync(`${file}.br`, await brotli(body, { params }))
      writeFileSync(`${file}.gz`, await gzipped(body, { level: 9 }))
    }),
  )
}

if (import.meta.main) {
  const started = performance.now()
  await buildApp()
  process.stdout.write(
    `build-app: dist/app built in ${Math.round(performance.now() - started)} ms\n`,
  )
}
