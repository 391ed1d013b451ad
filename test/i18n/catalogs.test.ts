import assert from 'node:assert/strict'
import { globSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { LANGUAGE_CODES, LANGUAGES } from '../../src/i18n/languages.ts'

// The catalogs (docs/languages.md#adding-a-language): one file per language, every one with
// the same keys, each key used by the code and each key the code names in every catalog.
// A plural text has the forms its language's rules name (`_one`, `_other`, …).

const root = path.resolve(import.meta.dirname, '../..')
const PLURAL = /_(zero|one|two|few|many|other)$/
// a key names an area and at least two more parts: `app.account.title`
const KEY = /^(app|page|mail|notify|common|embed)(\.[A-Za-z0-9_-]+){2,}$/

function leaves(value: unknown, prefix = ''): Map<string, string> {
  const out = new Map<string, string>()
  for (const [name, inner] of Object.entries(value as Record<string, unknown>)) {
    const key = prefix ? `${prefix}.${name}` : name
    if (typeof inner === 'string') out.set(key, inner)
    else if (inner && typeof inner === 'object')
      for (const [k, v] of leaves(inner, key)) out.set(k, v)
    else assert.fail(`${key} is neither a text nor a section`)
  }
  return out
}

const catalogs = new Map(
  LANGUAGE_CODES.map((code) => [
    code,
    leaves(JSON.parse(readFileSync(path.join(root, `src/i18n/locales/${code}.json`), 'utf8'))),
  ]),
)
const base = (key: string): string => key.replace(PLURAL, '')
const keysOf = (code: string): Set<string> =>
  new Set([...(catalogs.get(code as never) ?? new Map()).keys()].map(base))

/** Every quoted literal in the code that reads as a key. */
function keysInCode(): Map<string, string> {
  const files = globSync(['src/**/*.ts', 'app/src/**/*.{ts,tsx}'], { cwd: root })
  const found = new Map<string, string>()
  for (const file of files) {
    const text = readFileSync(path.join(root, file), 'utf8')
    for (const match of text.matchAll(/['"`]([A-Za-z0-9_.-]+)['"`]/g)) {
      const literal = match[1] as string
      if (KEY.test(literal) && !found.has(literal)) found.set(literal, file)
    }
  }
  return found
}

describe('languages: every catalog holds the same keys, and the code uses each', () => {
  it('languages: each listed language has its catalog, and each catalog is listed', () => {
    const files = globSync('src/i18n/locales/*.json', { cwd: root }).map((f) =>
      path.basename(f, '.json'),
    )
    assert.deepEqual(files.sort(), Object.keys(LANGUAGES).sort())
  })

  for (const code of LANGUAGE_CODES)
    it(`languages: ${code}.json names each key once (a second one would hide the first)`, () => {
      const text = readFileSync(path.join(root, `src/i18n/locales/${code}.json`), 'utf8')
      const named = text.match(/^\s*"[^"]+"\s*:/gm)?.length ?? 0
      const count = (value: unknown): number =>
        Object.values(value as Record<string, unknown>).reduce<number>(
          (sum, inner) => sum + 1 + (typeof inner === 'object' && inner ? count(inner) : 0),
          0,
        )
      assert.equal(named, count(JSON.parse(text)))
    })

  for (const code of LANGUAGE_CODES) {
    if (code === 'en') continue
    it(`languages: ${code} has every key English has, and no other`, () => {
      const english = keysOf('en')
      const other = keysOf(code)
      assert.deepEqual(
        [...english].filter((k) => !other.has(k)),
        [],
        `missing in ${code}.json`,
      )
      assert.deepEqual(
        [...other].filter((k) => !english.has(k)),
        [],
        `in ${code}.json, not in en.json`,
      )
    })
  }

  for (const code of LANGUAGE_CODES) {
    it(`languages: ${code}'s plural texts have the forms its plural rules name`, () => {
      const texts = catalogs.get(code) as Map<string, string>
      const categories = new Intl.PluralRules(code).resolvedOptions().pluralCategories
      const plurals = new Set([...texts.keys()].filter((k) => PLURAL.test(k)).map(base))
      for (const key of plurals)
        for (const category of categories)
          assert.ok(texts.has(`${key}_${category}`), `${code}: ${key}_${category}`)
    })

    it(`languages: ${code}'s texts put in only the values English's do`, () => {
      const english = catalogs.get('en') as Map<string, string>
      const texts = catalogs.get(code) as Map<string, string>
      const values = (text: string) =>
        [...text.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)].map((m) => m[1]).sort()
      for (const [key, text] of texts) {
        const englishText = english.get(key) ?? english.get(`${base(key)}_other`)
        if (englishText === undefined) continue
        assert.deepEqual(
          [...new Set(values(text))],
          [...new Set(values(englishText))],
          `${code}: ${key}`,
        )
      }
    })
  }

  it('languages: every key the code names is in the catalogs', () => {
    const english = keysOf('en')
    const missing = [...keysInCode()]
      .filter(([key]) => !english.has(key))
      .map(([key, file]) => `${key} (${file})`)
    assert.deepEqual(missing, [])
  })

  it('languages: every key in the catalogs is used by the code', () => {
    const used = keysInCode()
    assert.deepEqual(
      [...keysOf('en')].filter((key) => !used.has(key)),
      [],
    )
  })
})
