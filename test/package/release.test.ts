import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { it } from 'node:test'
import { ROOT } from '../helpers/processes.ts'

// docs/operations.md#making-a-release: what a release leaves behind, checked on every run so
// that a version bump without the rest fails at once: both packages carry one version, the
// changelog has a dated section for it below `## Unreleased`, and the upgrade fixture of that
// version is there, made by its own code (test/db/upgrade-from-release.test.ts opens it).

const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'))
const VERSION: string = readJson('package.json').version
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/

/** Orders two versions X.Y.Z: negative when `a` comes first. */
const compare = (a: string, b: string): number => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number)) as [number[], number[]]
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number)
  return 0
}

const headings = fs
  .readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8')
  .split('\n')
  .filter((line) => line.startsWith('## '))
const RELEASE = /^## (\d+\.\d+\.\d+) — (\d{4}-\d{2}-\d{2})$/
const releases = headings.slice(1).map((line) => {
  const m = RELEASE.exec(line)
  assert.ok(m, `a release heading is "## X.Y.Z — YYYY-MM-DD": ${line}`)
  return { version: m[1] as string, date: m[2] as string }
})

it('statusd and @statusd/client carry one version, X.Y.Z', () => {
  assert.match(VERSION, SEMVER)
  assert.equal(readJson('packages/client/package.json').version, VERSION)
})

it('the changelog: Unreleased first, then one dated section per release, newest first', () => {
  assert.equal(headings[0], '## Unreleased')
  assert.ok(releases.length > 0, 'at least one release')
  for (const [i, r] of releases.entries()) {
    assert.match(r.version, SEMVER)
    assert.ok(!Number.isNaN(Date.parse(`${r.date}T00:00:00Z`)), `${r.date} is a date`)
    const older = releases[i + 1]
    if (older === undefined) continue
    assert.ok(compare(r.version, older.version) > 0, `${r.version} above ${older.version}`)
    assert.ok(r.date >= older.date, `${r.version}'s date is not before ${older.version}'s`)
  }
  assert.equal(releases[0]?.version, VERSION, "the newest section is the packages' version")
})

it("each release's upgrade fixture is there, made by that release on both engines", () => {
  const dir = path.join(ROOT, 'test', 'fixtures', 'upgrade')
  const fixtures = fs.readdirSync(dir).sort(compare)
  assert.ok(fixtures.includes(VERSION), `test/fixtures/upgrade/${VERSION}/ is there`)
  for (const version of fixtures) {
    assert.ok(
      releases.some((r) => r.version === version),
      `${version} is a release of the changelog`,
    )
    const files = fs.readdirSync(path.join(dir, version)).sort()
    assert.deepEqual(files, ['postgres.json', 'postgres.sql', 'sqlite.db', 'sqlite.json'])
    for (const engine of ['sqlite', 'postgres']) {
      const record = readJson(`test/fixtures/upgrade/${version}/${engine}.json`)
      assert.equal(record.version, version)
      assert.equal(record.engine, engine)
    }
  }
})
