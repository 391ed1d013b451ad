import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { containsLink, findLinks } from '../../src/lib/links.ts'
import { descriptionParts } from '../../src/modules/statuses/share-view.ts'

// One link detector for the plan gate and the share view (docs/api.md#plans): a description
// a plan without links refuses is one a plan with links shows with a link, and the reverse.

const linked = (text: string) => descriptionParts(text, true).some((p) => p.href !== undefined)

describe('the plan gate and the share view find the same links', () => {
  for (const text of [
    'Docs at example.dev/docs',
    'example.xyz',
    'status.example.xyz/room-4',
    'www.example.app',
    'mysite.tech',
    'https://example.com',
    'see http://example.com/status?x=1 for more',
    'Details at example.com.',
    'ops@example.com',
    'mailto:ops@example.com',
    'münchen.de',
    '(example.io)',
    // look-alikes (docs/api.md#plans): found in the text as a reader takes it
    'example\u3002com/x',
    'example.com\u200b/x',
    'ｈｔｔｐｓ://evil.com',
    'ｅｘａｍｐｌｅ．ｃｏｍ',
    'ops\uff20example.org',
  ])
    it(`${JSON.stringify(text)}: refused without links, a link with them`, () => {
      assert.equal(containsLink(text), true, 'the gate finds a link')
      assert.equal(linked(text), true, 'the page makes it clickable')
    })

  for (const text of ['OCCUPIED', 'version 1.2.3', 'see node.js and main.go', 'ratio 3:4, 50%'])
    it(`${JSON.stringify(text)}: no link for either`, () => {
      assert.equal(containsLink(text), false)
      assert.equal(linked(text), false)
    })

  it('every link the page would make is one the gate refuses', () => {
    for (const text of ['a example.dev b', 'x ops@example.org y', 'http://[::1]/ and foo.bar'])
      if (findLinks(text).length > 0) assert.equal(containsLink(text), true, text)
  })

  it('what a reader follows but no safe link can be made of is refused, and stays text', () => {
    for (const text of [
      'example.com:8080/desk',
      'sftp://files.example.com',
      'Open https:example.com',
    ]) {
      assert.equal(containsLink(text), true, text)
      assert.equal(linked(text), false, text)
    }
  })

  it('finds where each link stands, and where it leads', () => {
    assert.deepEqual(findLinks('Docs at example.dev/docs, or ops@example.com'), [
      { index: 8, lastIndex: 24, text: 'example.dev/docs', url: 'http://example.dev/docs' },
      { index: 29, lastIndex: 44, text: 'ops@example.com', url: 'mailto:ops@example.com' },
    ])
  })
})

describe('look-alikes: found in the folded text, shown as sent', () => {
  it('a link found through folding spans the text as sent and leads to the folded target', () => {
    const text = 'at ｅｘａｍｐｌｅ．ｃｏｍ/ｘ\u200b, or example\u3002org'
    assert.deepEqual(
      findLinks(text).map(({ text, url }) => ({ text, url })),
      [
        { text: 'ｅｘａｍｐｌｅ．ｃｏｍ/ｘ', url: 'http://example.com/x' },
        { text: 'example\u3002org', url: 'http://example.org' },
      ],
    )
    assert.equal(
      descriptionParts(text, true)
        .map((p) => p.text)
        .join(''),
      text,
    )
  })

  it('full-width text without a link is no link', () => {
    for (const text of ['ＯＣＣＵＰＩＥＤ', 'ｖ１．２', '３ ｐ．ｍ．', 'node\u3002js'])
      assert.equal(containsLink(text), false, text)
  })
})
