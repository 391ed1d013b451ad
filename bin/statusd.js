#!/usr/bin/env node
// The `statusd` command: `statusd serve`, and the admin commands (`statusd --help`).
import { main } from '../src/cli/main.ts'

process.exitCode = await main(process.argv.slice(2))
