#!/usr/bin/env node
// The `statusd` command: `statusd serve`, and the admin commands (`statusd --help`).
import module from 'node:module'

// Node caches the compiled code of every module (the type-stripped TypeScript too) in the
// system temp directory, so a restart skips most of the compile work (cold start).
// note: NODE_COMPILE_CACHE, when set, chooses the directory; a cache it cannot write is skipped.
module.enableCompileCache?.()

const { main } = await import('../src/cli/main.ts')
process.exitCode = await main(process.argv.slice(2))
