// The Node.js version check (docs/operations.md#requirements-and-installation): the first thing
// `statusd` runs (bin/statusd.js imports it before anything else), and the first thing `npm ci`
// runs in a checkout (package.json's `prepare` script runs this file before building the app).
// An older Node would otherwise die on its first TypeScript file with a message about file
// extensions or syntax. So this file uses only what every Node with ES modules parses and runs:
// no import attributes (Node 18 knows only `assert`), no type stripping; package.json is read
// as text.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const needed = pkg.engines.node // ">=22.18": the only form this check reads
const [major, minor] = process.versions.node.split('.').map(Number)
const wanted = /^>=\s*(\d+)(?:\.(\d+))?/.exec(needed) || []
const needMajor = Number(wanted[1] || 0)
const needMinor = Number(wanted[2] || 0)
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  // run on its own, it is npm's `prepare` (npm ci, npm install); imported, it is `statusd`
  const again = process.argv[1] === fileURLToPath(import.meta.url) ? 'npm ci' : 'statusd'
  process.stderr.write(
    `statusd: needs Node.js ${needed}, but this is Node.js ${process.versions.node} (${process.execPath}).\n` +
      'Install Node.js 24 LTS: https://nodejs.org/en/download (or with a version manager: nvm install 24),\n' +
      `then run ${again} again with it.\n`,
  )
  process.exit(2)
}
