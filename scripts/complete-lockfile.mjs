#!/usr/bin/env node
// Adds the lock entries of Biome's other-platform binaries when `npm install` left them out.
// note: this workplace's registry mirror serves only the linux builds, so npm writes a lock
// without them, and `npm ci` then refuses it ("Missing: @biomejs/cli-win32-x64@ from lock
// file"). The entries carry os/cpu, so npm skips them everywhere but their own platform.
// Idempotent; run after any `npm install`.
import { readFileSync, writeFileSync } from 'node:fs'

const path = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(path, 'utf8'))
const biome = lock.packages['node_modules/@biomejs/biome']
let added = 0
for (const [name, version] of Object.entries(biome?.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`
  if (lock.packages[key]) continue
  const [, os, arch, libc] = /cli-(\w+)-(\w+?)(?:-(musl))?$/.exec(name) ?? []
  if (!os || !arch) throw new Error(`cannot tell the platform of ${name}`)
  lock.packages[key] = {
    version,
    cpu: [arch],
    dev: true,
    license: 'MIT OR Apache-2.0',
    optional: true,
    os: [os === 'win32' ? 'win32' : os],
    ...(libc && { libc: [libc] }),
    engines: { node: '>=14.21.3' },
  }
  added += 1
}
// keep the packages map in npm's sorted order so diffs stay small
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) =>
    a === '' ? -1 : b === '' ? 1 : a.localeCompare(b),
  ),
)
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`complete-lockfile: added ${added} entr${added === 1 ? 'y' : 'ies'}`)
