#!/usr/bin/env node
// The `statusd` command: `statusd serve`, the admin commands and the client (`statusd --help`).
//
// First of all, the Node.js version (bin/check-node.js): an older Node would otherwise die on
// its first import with a message about file extensions or syntax. Imported first, it runs
// before anything else is loaded; this file, too, is plain JavaScript every Node parses.
import './check-node.js'
import { existsSync } from 'node:fs'
import module from 'node:module'

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
