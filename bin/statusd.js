#!/usr/bin/env node
// The `statusd` command: `statusd serve`, the admin commands and the client (`statusd --help`).
//
// First of all, the Node.js version (docs/operations.md#requirements-and-installation): an
// older Node would otherwise die on its first import with a message about file extensions or
// syntax. So this file uses only what every Node with ES modules parses and runs: no import
// attributes (Node 18 knows only `assert`), no type stripping; package.json is read as text.
import { existsSync, readFileSync } from 'node:fs'
import module from 'node:module'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const needed = pkg.engines.node // ">=22.18": the only form this check reads
const [major, minor] = process.versions.node.split('.').map(Number)
const wanted = /^>=\s*(\d+)(?:\.(\d+))?/.exec(needed) || []
const needMajor = Number(wanted[1] || 0)
const needMinor = Number(wanted[2] || 0)
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  process.stderr.write(
    `statusd: needs Node.js ${needed}, but this is Node.js ${process.versions.node} (${process.execPath}).\n` +
      'Install Node.js 24 LTS: https://nodejs.org/en/download (or with a version manager: nvm install 24),\n' +
      'then run statusd again with it.\n',
  )
  process.exit(2)
}

// Node caches the compiled code of every module (the type-stripped TypeScript too) in the
// system temp directory, so a restart skips most of the compile work (cold start).
// note: NODE_COMPILE_CACHE, when set, chooses the directory; a cache it cannot write is skipped.
module.enableCompileCache?.()

// A checkout runs its TypeScript sources directly. The npm package ships no sources, but
// JavaScript compiled from them when it was packed (lib/, scripts/build-package.ts): Node does
// not strip types from files under node_modules.
const sources = new URL('../src/cli/main.ts', import.meta.url)
const entry = existsSync(sources)
  ? sources.href
  : new URL('../lib/cli/main.js', import.meta.url).href
const { main } = await import(entry)
process.exitCode = await main(process.argv.slice(2))
