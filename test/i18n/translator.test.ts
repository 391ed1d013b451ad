import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { translator } from '../../src/i18n/i18n.ts'
import { languageFor } from '../../src/i18n/languages.ts'

// The server's texts in the reader's language (docs/languages.md).

describe("languages: the server's texts follow the reader's language", () => {
  it('languages: a text comes in the language asked for', () => {
    assert.equal(translator('de')('common.language.label'), 'Sprache')
    assert.equal(translator('en')('common.language.label'), 'Language')
  })

  it('languages: no language, or one statusd does not speak, gives English', () => {
    assert.equal(translator(null)('common.language.label'), 'Language')
    assert.equal(translator('xx')('common.language.label'), 'Language')
  })

  const wanted: [string[], string][] = [
    [['de-AT', 'en'], 'de'],
    [['fr', 'de'], 'de'],
    [['fr'], 'en'],
    [['EN-gb'], 'en'],
    [[], 'en'],
  ]
  for (const [tags, language] of wanted)
    it(`languages: [${tags.join(', ')}] is answered in ${language}`, () => {
      assert.equal(languageFor(tags), language)
    })
})
